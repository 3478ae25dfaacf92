import { useEffect, useState } from 'preact/hooks';
import { z } from 'zod';
import { Invitation, InvitationSummary, Member, OrganizationWithRole } from '@smarthome/protocol/orgs';
import { api, describe } from '../api/http.ts';
import { onLink } from '../app/router.ts';
import { BrandingEditor } from './BrandingEditor.tsx';
import { MembersSection } from './Members.tsx';
import { MfaPolicy } from './MfaPolicy.tsx';
import { SharesEditor } from './Shares.tsx';
import { Alert } from '../app/Alert.tsx';

type Org = z.infer<typeof OrganizationWithRole>;

export function OrganizationsPage() {
  const [orgs, setOrgs] = useState<Org[] | null>(null);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    api('GET', '/v1/organizations', { schema: z.array(OrganizationWithRole) }).then(setOrgs, (e: unknown) =>
      setError(describe(e)),
    );
  useEffect(() => {
    void load();
  }, []);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await api('POST', '/v1/organizations', { body: { name } });
      setName('');
      await load();
    } catch (err) {
      setError(describe(err));
    }
  };
  return (
    <div>
      <h1>Organizations</h1>
      <Alert message={error} />
      <section class="card">
        {orgs?.length === 0 && <p class="note">You are in no organization yet.</p>}
        <ul class="rows">
          {orgs?.map((o) => (
            <li key={o.id}>
              <a href={`/organizations/${o.id}`} onClick={onLink}>
                {o.name}
              </a>
              <span class="badge online">{o.role}</span>
            </li>
          ))}
        </ul>
      </section>
      <section class="card">
        <h2>New organization</h2>
        <form class="inline" onSubmit={create}>
          <label>
            Organization name
            <input
              name="org-name"
              required
              maxLength={200}
              value={name}
              onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <button type="submit">Create</button>
        </form>
      </section>
    </div>
  );
}

/**
 * Members, and for admins the invitations (sending shows the invitation link once; pending ones
 * can be revoked), shares, the sign-in policy and the branding.
 */
export function OrganizationPage({ id }: { id: string }) {
  const [org, setOrg] = useState<Org | null>(null);
  const [members, setMembers] = useState<z.infer<typeof Member>[]>([]);
  const [invitations, setInvitations] = useState<z.infer<typeof InvitationSummary>[]>([]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'admin'>('member');
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const base = `/v1/organizations/${encodeURIComponent(id)}`;
  const load = async () => {
    try {
      const o =
        (await api('GET', '/v1/organizations', { schema: z.array(OrganizationWithRole) })).find((x) => x.id === id) ??
        null;
      setOrg(o);
      setMembers(await api('GET', `${base}/members`, { schema: z.array(Member) }));
      if (o?.role === 'admin')
        setInvitations(await api('GET', `${base}/invitations`, { schema: z.array(InvitationSummary) }));
    } catch (err) {
      setError(describe(err));
    }
  };
  useEffect(() => {
    void load();
  }, [id]);
  const invite = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const inv = await api('POST', `${base}/invitations`, { body: { email, role }, schema: Invitation });
      // the same link as the mail's (cloud/src/orgs/invitations.ts)
      setLink(`${location.origin}/invitations/${encodeURIComponent(inv.id)}?token=${encodeURIComponent(inv.token)}`);
      setEmail('');
      await load();
    } catch (err) {
      setError(describe(err));
    }
  };
  const revoke = async (invitationId: string) => {
    try {
      await api('DELETE', `${base}/invitations/${encodeURIComponent(invitationId)}`);
      await load();
    } catch (err) {
      setError(describe(err));
    }
  };
  return (
    <div>
      <h1>{org?.name ?? 'Organization'}</h1>
      <Alert message={error} />
      {org && <MembersSection orgId={org.id} members={members} admin={org.role === 'admin'} onChanged={load} />}
      {org?.role === 'admin' && (
        <section class="card">
          <h2>Invitations</h2>
          <ul class="rows">
            {invitations.map((i) => (
              <li key={i.id}>
                <span class="entity-name">{i.email}</span>
                <span class={`badge ${i.status === 'pending' ? 'online' : 'offline'}`}>{i.status}</span>
                <span class="note">{i.role}</span>
                {i.status === 'pending' && (
                  <button
                    type="button"
                    class="danger"
                    onClick={() => void revoke(i.id)}
                    aria-label={`Revoke the invitation of ${i.email}`}
                  >
                    Revoke
                  </button>
                )}
              </li>
            ))}
          </ul>
          <form class="add-card" onSubmit={invite}>
            <label>
              E-mail to invite
              <input
                name="invite-email"
                type="email"
                required
                value={email}
                onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)}
              />
            </label>
            <label>
              Role
              <select
                value={role}
                onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as 'member' | 'admin')}
              >
                <option value="member">member</option>
                <option value="admin">admin</option>
              </select>
            </label>
            <button type="submit">Send invitation</button>
          </form>
          {link && (
            <div class="secret" role="status">
              <p>
                Send this link to the invitee (shown <strong>only now</strong>, valid 7 days):
              </p>
              <pre>
                <code>{link}</code>
              </pre>
            </div>
          )}
        </section>
      )}
      {org?.role === 'admin' && (
        <>
          <SharesEditor orgId={org.id} members={members} />
          <MfaPolicy org={org} onSaved={load} />
          <BrandingEditor key={org.id} org={org} onSaved={load} />
        </>
      )}
    </div>
  );
}
