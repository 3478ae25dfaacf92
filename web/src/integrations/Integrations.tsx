import { useEffect, useRef, useState } from 'preact/hooks';
import { describe } from '../api/http.ts';
import { useApp } from '../app/context.ts';
import { ConfirmStep, focusIfLost, useFocusBack } from '../app/focus.tsx';
import { Wizard } from './Wizard.tsx';
import * as flows from './flows.ts';
import { takeReturned } from './oauth.ts';
import type { Entry, FlowResult, Handler, Home } from './flows.ts';
import { Alert } from '../app/Alert.tsx';

/**
 * Integrations: the config entries (removed after a confirm step), the integrations that can
 * be set up, and the config-flow wizard. On the cloud flows run on an edge of the active
 * scope, chosen here when there are several; on an edge, on that edge.
 */
export function IntegrationsPage() {
  const { kind } = useApp();
  const [homes, setHomes] = useState<Home[] | null>(kind === 'cloud' ? null : []);
  const [edgeId, setEdgeId] = useState<number | null>(null);
  const [list, setList] = useState<Entry[] | null>(null);
  const [available, setAvailable] = useState<Handler[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);
  const configured = useRef<HTMLHeadingElement>(null);
  useFocusBack(confirming, (id) => document.querySelector<HTMLElement>(`[data-entry="${id}"] button`));
  const [flow, setFlow] = useState<FlowResult | null>(takeReturned);
  // the closed wizard hands the focus back to the Add button that started it
  useFocusBack(flow?.handler ?? null, (domain) =>
    document.querySelector<HTMLElement>(`[data-handler="${CSS.escape(domain)}"] button`),
  );
  const [status, setStatus] = useState<string | null>(null);

  const [flowEdge, setFlowEdge] = useState<number | null>(null);
  const loadEntries = () =>
    flows.entries().then(
      (e) => setList(e),
      (err: unknown) => setError(describe(err)),
    );
  /** The cloud lists entries from its mirror of the edge, which follows a moment later: ask again until the change shows. */
  const refreshUntil = async (done: (l: Entry[]) => boolean) => {
    for (let i = 0; i < 20; i++) {
      const l = await flows.entries();
      setList(l);
      if (done(l)) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const same = (e: Entry, id: number, edge: number | null | undefined) =>
    e.id === id && (kind !== 'cloud' || edge == null || e.edge_id === edge);
  useEffect(() => {
    void loadEntries();
    if (kind === 'cloud')
      flows.homes().then(
        (h) => {
          setHomes(h);
          setEdgeId(h[0]?.id ?? null);
        },
        (err: unknown) => setError(describe(err)),
      );
  }, []);
  useEffect(() => {
    if (homes === null || (kind === 'cloud' && edgeId === null)) return;
    setAvailable(null);
    flows.handlers(edgeId).then(setAvailable, (err: unknown) => setError(describe(err)));
  }, [homes, edgeId]);

  const remove = async (entry: Entry) => {
    setError(null);
    try {
      await flows.removeEntry(entry);
      setConfirming(null);
      setStatus(`${entry.title} was removed.`);
      await refreshUntil((l) => !l.some((e) => same(e, entry.id, entry.edge_id)));
      // the removed row took the focus with it: the list's heading has it next
      focusIfLost(configured.current);
    } catch (err) {
      setError(describe(err));
    }
  };
  const start = async (h: Handler) => {
    setError(null);
    setStatus(null);
    try {
      setFlowEdge(kind === 'cloud' ? edgeId : null);
      setFlow(await flows.startFlow(h.domain, kind === 'cloud' ? edgeId : null));
    } catch (err) {
      setError(describe(err));
    }
  };
  const homeName = (id: number | null | undefined) => homes?.find((h) => h.id === id)?.name;

  return (
    <div>
      <h1>Integrations</h1>
      <Alert message={error} />
      {status && (
        <p class="ok" role="status">
          {status}
        </p>
      )}
      {flow && (
        <Wizard
          key={flow.flowId}
          first={flow}
          name={available?.find((h) => h.domain === flow.handler)?.name ?? flow.handler}
          onCreated={(id) =>
            void refreshUntil((l) => l.some((e) => same(e, id, flowEdge))).catch((err: unknown) =>
              setError(describe(err)),
            )
          }
          onClose={() => setFlow(null)}
        />
      )}
      <section class="card">
        <h2 tabIndex={-1} ref={configured}>
          Configured
        </h2>
        {list === null && !error && (
          <p class="note" role="status">
            Loading…
          </p>
        )}
        {list?.length === 0 && <p class="note">No integration is set up yet.</p>}
        {list && list.length > 0 && (
          <ul class="rows">
            {list.map((e) => (
              <li key={`${e.edge_id ?? ''}-${e.id}`} data-entry={e.id}>
                <span class="entity-name">{e.title}</span>
                <span class="note">{e.domain}</span>
                {homes && homes.length > 1 && <span class="note">{homeName(e.edge_id) ?? `edge ${e.edge_id}`}</span>}
                <span class={`badge ${e.state === 'loaded' ? 'online' : 'offline'}`}>{e.state}</span>
                {confirming === e.id ? (
                  <ConfirmStep
                    label={`Remove ${e.title}?`}
                    onConfirm={() => void remove(e)}
                    onCancel={() => setConfirming(null)}
                  >
                    Confirm remove {e.title}
                  </ConfirmStep>
                ) : (
                  <button type="button" onClick={() => setConfirming(e.id)} aria-label={`Remove ${e.title}`}>
                    Remove
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section class="card">
        <h2>Add integration</h2>
        {kind === 'cloud' && homes?.length === 0 && (
          <p class="note">No home in this scope: pair an edge on the Homes page first; integrations run on it.</p>
        )}
        {homes && homes.length > 1 && (
          <label>
            Home
            <select
              value={String(edgeId ?? '')}
              onChange={(e) => setEdgeId(Number((e.currentTarget as HTMLSelectElement).value))}
            >
              {homes.map((h) => (
                <option key={h.id} value={String(h.id)}>
                  {h.name} ({h.status})
                </option>
              ))}
            </select>
          </label>
        )}
        {available === null && !(kind === 'cloud' && homes?.length === 0) && !error && (
          <p class="note" role="status">
            Loading…
          </p>
        )}
        {available && (
          <ul class="rows">
            {available.map((h) => (
              <li key={h.domain} data-handler={h.domain}>
                <span class="entity-name">{h.name}</span>
                <span class="note">{h.domain}</span>
                <button type="button" disabled={!!flow} onClick={() => void start(h)} aria-label={`Add ${h.name}`}>
                  Add
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
