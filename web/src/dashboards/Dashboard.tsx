import { useEffect, useState } from 'preact/hooks';
import { z } from 'zod';
import { Dashboard as DashboardSchema, type Dashboard } from '@smarthome/protocol/dashboards';
import { api, describe } from '../api/http.ts';
import { useApp } from '../app/context.ts';
import { onLink } from '../app/router.ts';
import { domainOf, useLive } from '../live/states.ts';
import type { Card } from './card.ts';
import { CardView } from './cards.tsx';
import { DashboardEditor } from './Editor.tsx';

/** Without a stored dashboard (and always on the edge): one card per domain, built from the live states. */
function AutoView() {
  const { live } = useApp();
  useLive(live);
  const byDomain = new Map<string, string[]>();
  for (const id of [...live.states.keys()].sort()) {
    const d = domainOf(id);
    byDomain.set(d, [...(byDomain.get(d) ?? []), id]);
  }
  if (live.status !== 'live' && byDomain.size === 0)
    return (
      <p class="note" role="status">
        Loading states…
      </p>
    );
  if (byDomain.size === 0)
    return <p class="note">No entities yet: add devices to this home (MQTT discovery or an integration).</p>;
  const cards: Card[] = [...byDomain].map(([domain, ids]) => ({
    type: 'entities',
    title: domain[0].toUpperCase() + domain.slice(1),
    entities: ids,
  }));
  return (
    <div class="cards">
      {cards.map((c) => (
        <CardView key={String(c.title)} card={c} />
      ))}
    </div>
  );
}

export function DashboardPage({ id }: { id: number | null }) {
  const { kind } = useApp();
  const [dashboards, setDashboards] = useState<Dashboard[] | null>(kind === 'edge' ? [] : null);
  const [error, setError] = useState<string | null>(null);
  const [viewIndex, setViewIndex] = useState(0);
  const [editing, setEditing] = useState(false);
  useEffect(() => {
    if (kind === 'edge') return;
    api('GET', '/v1/ui-dashboard', { schema: z.array(DashboardSchema) }).then(setDashboards, (e: unknown) =>
      setError(describe(e)),
    );
  }, [kind]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!dashboards)
    return (
      <p class="note" role="status">
        Loading dashboards…
      </p>
    );
  const current = id === null ? dashboards[0] : dashboards.find((d) => d.id === id);
  const views = current?.config.views ?? [];
  const view = views[Math.min(viewIndex, Math.max(views.length - 1, 0))];
  return (
    <div>
      <div class="title-row">
        <h1>{current ? current.title || current.name : 'Overview'}</h1>
        {kind === 'cloud' && !editing && (
          <button type="button" class="secondary" onClick={() => setEditing(true)}>
            Edit dashboard
          </button>
        )}
      </div>
      {editing && (
        <DashboardEditor
          dashboard={current}
          viewIndex={Math.min(viewIndex, Math.max(views.length - 1, 0))}
          onDone={(saved) => {
            setEditing(false);
            if (saved) setDashboards([saved, ...dashboards.filter((d) => d.id !== saved.id)]);
          }}
        />
      )}
      {dashboards.length > 1 && (
        <nav aria-label="Dashboards" class="tabs">
          {dashboards.map((d) => (
            <a
              key={d.id}
              href={`/dashboards/${d.id}`}
              onClick={onLink}
              aria-current={d === current ? 'page' : undefined}
            >
              {d.title || d.name}
            </a>
          ))}
        </nav>
      )}
      {views.length > 1 && (
        <div role="tablist" aria-label="Views" class="tabs">
          {views.map((v, i) => (
            <button key={i} type="button" role="tab" aria-selected={v === view} onClick={() => setViewIndex(i)}>
              {v.title || `View ${i + 1}`}
            </button>
          ))}
        </div>
      )}
      {view ? (
        <div class="cards">
          {view.cards.map((c, i) => (
            <CardView key={i} card={c} />
          ))}
        </div>
      ) : (
        <AutoView />
      )}
    </div>
  );
}
