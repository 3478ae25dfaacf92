import { useEffect, useRef, useState } from 'preact/hooks';
import { z } from 'zod';
import { Dashboard as DashboardSchema, type Dashboard } from '@smarthome/protocol/dashboards';
import { api, describe } from '../api/http.ts';
import { useApp } from '../app/context.ts';
import { useFocusBack } from '../app/focus.tsx';
import { onLink } from '../app/router.ts';
import { domainOf, useLiveShape } from '../live/states.ts';
import type { Card } from './card.ts';
import { CardView } from './cards.tsx';
import { DashboardEditor } from './Editor.tsx';

/** Without a stored dashboard: one card per domain, built from the live states. */
function AutoView() {
  const { live } = useApp();
  // each row follows its own entity: this list re-renders only when entities appear or go
  useLiveShape(live);
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
  const [dashboards, setDashboards] = useState<Dashboard[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [viewIndex, setViewIndex] = useState(0);
  const [editing, setEditing] = useState(false);
  const editButton = useRef<HTMLButtonElement>(null);
  // the button is gone while editing: closing the editor hands the focus back to it
  useFocusBack(editing || null, () => editButton.current);
  useEffect(() => {
    // the edge answers with its own dashboards (edge/src/dashboards), the same shape as the cloud's
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
  /** Arrow keys, Home and End on the views' tabs select a view and move the focus to its tab. */
  const onTabKey = (e: KeyboardEvent, count: number) => {
    const at = Math.min(viewIndex, count - 1);
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: count - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const next = (to + count) % count;
    setViewIndex(next);
    // the tab exists already: only its tabIndex and selection change
    (e.currentTarget as HTMLElement).querySelector<HTMLElement>(`#view-tab-${next}`)?.focus();
  };
  const current = id === null ? dashboards[0] : dashboards.find((d) => d.id === id);
  const views = current?.config.views ?? [];
  const view = views[Math.min(viewIndex, Math.max(views.length - 1, 0))];
  return (
    <div>
      <div class="title-row">
        <h1>{current ? current.title || current.name : 'Overview'}</h1>
        {!editing && (
          <button ref={editButton} type="button" class="secondary" onClick={() => setEditing(true)}>
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
        <div role="tablist" aria-label="Views" class="tabs" onKeyDown={(e) => onTabKey(e, views.length)}>
          {views.map((v, i) => (
            <button
              key={i}
              id={`view-tab-${i}`}
              type="button"
              role="tab"
              aria-selected={v === view}
              aria-controls="view-panel"
              // one tab stop for the list: the arrows move between the views (WAI-ARIA tabs)
              tabIndex={v === view ? 0 : -1}
              onClick={() => setViewIndex(i)}
            >
              {v.title || `View ${i + 1}`}
            </button>
          ))}
        </div>
      )}
      {view ? (
        <div
          class="cards"
          id="view-panel"
          {...(views.length > 1 ? { role: 'tabpanel', 'aria-labelledby': `view-tab-${views.indexOf(view)}` } : {})}
        >
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
