import { useState } from 'preact/hooks';
import { z } from 'zod';
import { MessageBody } from '@smarthome/protocol/common';
import { Member } from '@smarthome/protocol/orgs';
import { api, describe } from '../api/http.ts';
import { ConfirmStep, focusIfLost, useFocusBack } from '../app/focus.tsx';
import { Alert } from '../app/Alert.tsx';

type MemberRow = z.infer<typeof Member>;

/**
 * The members; an admin changes a role with its select and removes a member after a confirm
 * step. Refusals (the last admin) are shown as the API words them. `onChanged` reloads.
 */
export function MembersSection(props: {
  orgId: string;
  members: MemberRow[];
  admin: boolean;
  onChanged: () => Promise<void>;
}) {
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  useFocusBack(confirming, (id) => {
    const email = props.members.find((m) => m.user_id === id)?.email;
    return email ? document.querySelector<HTMLElement>(`[data-member="${CSS.escape(email)}"] button.danger`) : null;
  });
  const base = `/v1/organizations/${encodeURIComponent(props.orgId)}/members`;
  const run = async (call: () => Promise<string>) => {
    setError(null);
    setDone(null);
    try {
      setDone(await call());
    } catch (err) {
      setError(describe(err));
    }
    // reload either way: a refused change puts the select back to the stored role
    await props.onChanged();
    // a removed member's row took the focus with it
    focusIfLost(document.getElementById('members-title'));
  };
  const setRole = (m: MemberRow, role: 'admin' | 'member') =>
    run(async () => {
      await api('PATCH', `${base}/${encodeURIComponent(m.user_id)}`, { body: { role }, schema: Member });
      return `${m.email} is now ${role}.`;
    });
  const remove = (m: MemberRow) =>
    run(async () => {
      setConfirming(null);
      return (await api('DELETE', `${base}/${encodeURIComponent(m.user_id)}`, { schema: MessageBody })).message;
    });
  return (
    <section class="card" aria-labelledby="members-title">
      <h2 id="members-title" tabIndex={-1}>
        Members
      </h2>
      <Alert message={error} />
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
      <ul class="rows">
        {props.members.map((m) => (
          <li key={m.user_id} data-member={m.email}>
            <span class="entity-name">{m.name ?? m.email}</span>
            <span class="note">{m.email}</span>
            {props.admin ? (
              <>
                <select
                  aria-label={`Role of ${m.email}`}
                  value={m.role}
                  onChange={(e) => void setRole(m, (e.currentTarget as HTMLSelectElement).value as 'admin' | 'member')}
                >
                  <option value="member">member</option>
                  <option value="admin">admin</option>
                </select>
                {confirming === m.user_id ? (
                  <ConfirmStep
                    label={`Remove ${m.email}?`}
                    cancelClass="secondary"
                    onConfirm={() => void remove(m)}
                    onCancel={() => setConfirming(null)}
                  >
                    Yes, remove {m.email}
                  </ConfirmStep>
                ) : (
                  <button
                    type="button"
                    class="danger"
                    onClick={() => setConfirming(m.user_id)}
                    aria-label={`Remove ${m.email}`}
                  >
                    Remove
                  </button>
                )}
              </>
            ) : (
              <span class="badge online">{m.role}</span>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
