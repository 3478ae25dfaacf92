import { useEffect, useState } from 'preact/hooks';
import { z } from 'zod';
import { CreatedEdge, Edge } from '@smarthome/protocol/edges';
import { api, describe } from '../api/http.ts';
import { ConfirmStep, focusIfLost, useFocusBack } from '../app/focus.tsx';
import { Alert } from '../app/Alert.tsx';

type EdgeT = z.infer<typeof Edge>;
interface Org {
  id: string;
  name: string;
  role: string;
}
interface Group {
  title: string;
  org: string | null;
  edges: EdgeT[];
}

const ago = (iso: string | null) => {
  if (!iso) return 'never';
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return `${Math.max(s, 0)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return new Date(iso).toLocaleString();
};

const edgesOf = (org: string | null): Promise<EdgeT[]> => api('GET', '/v1/edges', { org, schema: z.array(Edge) });

/** The caller's homes (personal edges, and each organization's), pairing and revoking. */
export function HomesPage() {
  const [groups, setGroups] = useState<Group[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [paired, setPaired] = useState<{ name: string; token: string } | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);
  useFocusBack(confirming, (id) => document.querySelector<HTMLElement>(`[data-edge="${id}"] button`));
  const load = async () => {
    try {
      const orgs = await api<Org[]>('GET', '/v1/organizations');
      const all: Group[] = [{ title: 'My homes', org: null, edges: await edgesOf(null) }];
      for (const o of orgs)
        all.push({ title: `${o.name} (shared with me as ${o.role})`, org: o.id, edges: await edgesOf(o.id) });
      setGroups(all);
    } catch (err) {
      setError(describe(err));
    }
  };
  useEffect(() => {
    void load();
  }, []);
  const pair = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const created = await api('POST', '/v1/edges', { body: { name }, schema: CreatedEdge });
      setPaired({ name: created.edge.name, token: created.token });
      setName('');
      await load();
    } catch (err) {
      setError(describe(err));
    }
  };
  const revoke = async (id: number) => {
    setError(null);
    try {
      await api('DELETE', `/v1/edges/${id}`);
      setConfirming(null);
      await load();
      // a revoked edge has no button left to hold the focus: its list's heading takes it
      focusIfLost(document.querySelector(`[data-edge="${id}"]`)?.closest('section')?.querySelector('h2'));
    } catch (err) {
      setError(describe(err));
    }
  };
  return (
    <div>
      <h1>Homes</h1>
      <Alert message={error} />
      {!groups && !error && (
        <p class="note" role="status">
          Loading homes…
        </p>
      )}
      {groups?.map((g) => (
        <section key={g.org ?? 'me'} class="card">
          <h2 tabIndex={-1}>{g.title}</h2>
          {g.edges.length === 0 ? (
            <p class="note">No homes here yet.</p>
          ) : (
            <ul class="rows">
              {g.edges.map((edge) => (
                <li key={edge.id} data-edge={edge.id}>
                  <span class="entity-name">{edge.name}</span>
                  <span class={`badge ${edge.status}`}>{edge.status}</span>
                  <span class="note">last seen {ago(edge.last_seen_at)}</span>
                  {edge.status !== 'revoked' &&
                    g.org === null &&
                    (confirming === edge.id ? (
                      <ConfirmStep
                        label={`Revoke ${edge.name}?`}
                        onConfirm={() => void revoke(edge.id)}
                        onCancel={() => setConfirming(null)}
                      >
                        Confirm revoke
                      </ConfirmStep>
                    ) : (
                      <button type="button" onClick={() => setConfirming(edge.id)}>
                        Revoke
                      </button>
                    ))}
                </li>
              ))}
            </ul>
          )}
        </section>
      ))}
      <section class="card">
        <h2>Pair a new edge</h2>
        <form onSubmit={pair} class="inline">
          <label>
            Name
            <input
              name="edge-name"
              required
              maxLength={200}
              value={name}
              onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <button type="submit">Pair</button>
        </form>
        {paired && (
          <div class="secret" role="status">
            <p>
              Edge <strong>{paired.name}</strong> created. Its token is shown <strong>only now</strong>: run on the edge
            </p>
            <pre>
              <code>{`smarthome-edge --cloud-url ${location.origin} --token ${paired.token}`}</code>
            </pre>
            <p class="note">
              (or <code>pnpm edge --cloud-url {location.origin} --token …</code> from a checkout)
            </p>
          </div>
        )}
      </section>
    </div>
  );
}
