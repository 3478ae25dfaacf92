import { useEffect, useState } from 'preact/hooks';
import { z } from 'zod';
import { Dashboard } from '@smarthome/protocol/dashboards';
import { Device } from '@smarthome/protocol/devices';
import { type Member, Share, ShareResourceType } from '@smarthome/protocol/orgs';
import { api, describe } from '../api/http.ts';
import { useApp } from '../app/context.ts';
import { displayName } from '../live/states.ts';
import './orgs.css';
import { Alert } from '../app/Alert.tsx';

type ShareT = z.infer<typeof Share>;
type Kind = z.infer<typeof ShareResourceType>;
type Flags = Pick<ShareT, 'can_view' | 'can_control' | 'can_edit'>;
const FLAGS: Array<[keyof Flags, string]> = [
  ['can_view', 'view'],
  ['can_control', 'control'],
  ['can_edit', 'edit'],
];

/** What the admin can pick for a resource type (their entities, devices and dashboards); other types take a typed id. */
function useSuggestions(kind: Kind): Array<{ id: string; label: string }> {
  const { live } = useApp();
  const [list, setList] = useState<Array<{ id: string; label: string }>>([]);
  useEffect(() => {
    setList([]);
    if (kind === 'entity') setList([...live.states.values()].map((s) => ({ id: s.entity_id, label: displayName(s) })));
    else if (kind === 'device')
      api('GET', '/v1/devices', { schema: z.array(Device) }).then(
        (d) => setList(d.map((x) => ({ id: String(x.id), label: x.name }))),
        () => undefined,
      );
    else if (kind === 'dashboard')
      api('GET', '/v1/ui-dashboard', { schema: z.array(Dashboard) }).then(
        (d) => setList(d.map((x) => ({ id: String(x.id), label: x.title || x.name }))),
        () => undefined,
      );
  }, [kind]);
  return list;
}

const nameOf = (m: z.infer<typeof Member>) => (m.name ? `${m.name} (${m.email})` : m.email);

function FlagBoxes(props: { flags: Flags; set: (f: Flags) => void; what: string }) {
  return (
    <span class="flags" role="group" aria-label={`Permissions ${props.what}`}>
      {FLAGS.map(([key, label]) => (
        <label class="check" key={key}>
          <input
            type="checkbox"
            checked={props.flags[key]}
            onChange={(e) => props.set({ ...props.flags, [key]: (e.currentTarget as HTMLInputElement).checked })}
          />
          {label}
        </label>
      ))}
    </span>
  );
}

/**
 * The organization's shares (admins see all). A box changes the share in place (PATCH): its id
 * stays and the member keeps access throughout.
 */
export function SharesEditor({ orgId, members }: { orgId: string; members: Array<z.infer<typeof Member>> }) {
  const base = `/v1/organizations/${encodeURIComponent(orgId)}/shares`;
  const [shares, setShares] = useState<ShareT[]>([]);
  const [kind, setKind] = useState<Kind>('entity');
  const [resource, setResource] = useState('');
  const [member, setMember] = useState('');
  const [flags, setFlags] = useState<Flags>({ can_view: true, can_control: false, can_edit: false });
  const [error, setError] = useState<string | null>(null);
  const suggestions = useSuggestions(kind);
  const load = () => api('GET', base, { schema: z.array(Share) }).then(setShares);
  const run = async (f: () => Promise<unknown>) => {
    setError(null);
    try {
      await f();
    } catch (err) {
      setError(describe(err));
    }
    await load().catch((err: unknown) => setError(describe(err)));
  };
  useEffect(() => {
    void run(async () => undefined);
  }, [orgId]);
  const create = (body: Omit<ShareT, 'id' | 'org_id' | 'created_at'>) => api('POST', base, { body, schema: Share });
  const add = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await create({ resource_type: kind, resource_id: resource.trim(), user_id: member || null, ...flags });
      setResource('');
    });
  };
  // the boxes show the change while it is being made (a re-render would reset them to the old share)
  const [changing, setChanging] = useState<Map<number, Flags>>(new Map());
  const change = async (s: ShareT, next: Flags) => {
    setChanging(new Map(changing).set(s.id, next));
    const body = { can_view: next.can_view, can_control: next.can_control, can_edit: next.can_edit };
    await run(() => api('PATCH', `${base}/${s.id}`, { body, schema: Share }));
    setChanging(new Map());
  };
  const who = (userId: string | null) => {
    if (userId === null) return 'every member';
    const m = members.find((x) => x.user_id === userId);
    return m ? nameOf(m) : userId;
  };
  return (
    <section class="card" aria-labelledby="shares-h">
      <h2 id="shares-h">Shares</h2>
      <p class="note">What members of this organization may view, control or edit of yours.</p>
      <Alert message={error} />
      {shares.length === 0 && <p class="note">Nothing shared yet.</p>}
      <ul class="rows shares">
        {shares.map((s) => {
          const what = `${s.resource_type} ${s.resource_id} for ${who(s.user_id)}`;
          return (
            <li key={s.id}>
              <span class="entity-name">
                {s.resource_type} <code>{s.resource_id}</code>
              </span>
              <span class="note">{who(s.user_id)}</span>
              <FlagBoxes flags={changing.get(s.id) ?? s} set={(f) => void change(s, f)} what={`of ${what}`} />
              <button
                type="button"
                class="danger"
                onClick={() => void run(() => api('DELETE', `${base}/${s.id}`))}
                aria-label={`Delete the share of ${what}`}
              >
                Delete
              </button>
            </li>
          );
        })}
      </ul>
      <h3>Share something</h3>
      <form class="share-form" onSubmit={add}>
        <label>
          Resource type
          <select value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as Kind)}>
            {ShareResourceType.options.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Resource
          <input
            name="share-resource"
            required
            list="share-resources"
            value={resource}
            onInput={(e) => setResource((e.currentTarget as HTMLInputElement).value)}
          />
          <datalist id="share-resources">
            {suggestions.map((s) => (
              <option key={s.id} value={s.id}>
                {s.label}
              </option>
            ))}
          </datalist>
        </label>
        <label>
          With
          <select value={member} onChange={(e) => setMember((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">every member</option>
            {members.map((m) => (
              <option key={m.user_id} value={m.user_id}>
                {nameOf(m)}
              </option>
            ))}
          </select>
        </label>
        <FlagBoxes flags={flags} set={setFlags} what="of the new share" />
        <button type="submit">Share</button>
      </form>
    </section>
  );
}
