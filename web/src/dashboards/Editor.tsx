import { useEffect, useRef, useState } from 'preact/hooks';
import { Dashboard as DashboardSchema, type Dashboard } from '@smarthome/protocol/dashboards';
import { api, describe } from '../api/http.ts';
import { useApp } from '../app/context.ts';
import { onEscape } from '../app/focus.tsx';
import { displayName, useLive } from '../live/states.ts';
import type { Card } from './card.ts';
import { Alert } from '../app/Alert.tsx';

const TYPES = ['tile', 'button', 'sensor', 'gauge', 'entities', 'thermostat', 'media-control', 'markdown'] as const;

const entitiesOf = (card: Card): string =>
  typeof card.entity === 'string'
    ? card.entity
    : Array.isArray(card.entities)
      ? card.entities.map((e) => (typeof e === 'string' ? e : (e as Card).entity)).join(', ')
      : '';

/**
 * Edit mode: add, move and remove cards of a view, add and remove views, then save the whole
 * dashboard with PUT /v1/ui-dashboard (a new "home" dashboard when the scope has none yet).
 */
export function DashboardEditor({
  dashboard,
  viewIndex,
  onDone,
}: {
  dashboard: Dashboard | undefined;
  viewIndex: number;
  onDone: (saved: Dashboard | null) => void;
}) {
  const { live } = useApp();
  useLive(live);
  const [views, setViews] = useState<Array<{ title?: string; cards: Card[] } & Record<string, unknown>>>(() =>
    (dashboard?.config.views.length ? dashboard.config.views : [{ title: 'Home', cards: [] }]).map((v) => ({
      ...v,
      cards: [...v.cards],
    })),
  );
  const [at, setAt] = useState(Math.min(viewIndex, views.length - 1));
  const cards = views[at]?.cards ?? [];
  const setCards = (next: Card[]) => setViews(views.map((v, i) => (i === at ? { ...v, cards: next } : v)));
  const [viewTitle, setViewTitle] = useState('');
  const [content, setContent] = useState('');
  const [type, setType] = useState<(typeof TYPES)[number]>('tile');
  const [entity, setEntity] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ids = [...live.states.keys()].sort();
  // the button that opened edit mode is gone: the editor takes the focus
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const move = (i: number, by: number) => {
    const next = [...cards];
    const [card] = next.splice(i, 1);
    next.splice(i + by, 0, card);
    setCards(next);
  };
  const add = (e: Event) => {
    e.preventDefault();
    if (type === 'markdown') {
      setCards([...cards, { type, content }]);
      setContent('');
      return;
    }
    const id = entity || ids[0];
    if (!id) return;
    setCards([...cards, type === 'entities' ? { type, entities: [id] } : { type, entity: id }]);
  };
  const addView = (e: Event) => {
    e.preventDefault();
    setViews([...views, { title: viewTitle, cards: [] }]);
    setAt(views.length);
    setViewTitle('');
  };
  const save = async () => {
    setBusy(true);
    setError(null);
    const config = { ...(dashboard?.config ?? {}), views };
    try {
      const saved = await api('PUT', '/v1/ui-dashboard', {
        schema: DashboardSchema,
        body: dashboard
          ? { id: dashboard.id, name: dashboard.name, title: dashboard.title, config }
          : { name: 'home', title: 'Home', config },
      });
      onDone(saved);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card editor" aria-label="Edit dashboard" onKeyDown={onEscape(() => onDone(null))}>
      <h2 tabIndex={-1} ref={heading}>
        Edit the dashboard
      </h2>
      <div role="group" aria-label="Views" class="tabs">
        {views.map((v, i) => (
          <button key={i} type="button" aria-pressed={i === at} class="secondary" onClick={() => setAt(i)}>
            {v.title || `View ${i + 1}`}
          </button>
        ))}
      </div>
      <form class="inline" onSubmit={addView}>
        <label>
          New view title
          <input
            name="view-title"
            required
            maxLength={100}
            value={viewTitle}
            onInput={(e) => setViewTitle((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="submit">Add view</button>
        {views.length > 1 && (
          <button
            type="button"
            class="danger"
            onClick={() => {
              setViews(views.filter((_, i) => i !== at));
              setAt(Math.max(0, at - 1));
            }}
          >
            Remove view “{views[at]?.title || `View ${at + 1}`}”
          </button>
        )}
      </form>
      <h3>Cards of “{views[at]?.title || `View ${at + 1}`}”</h3>
      <ol class="rows">
        {cards.map((c, i) => (
          <li key={i}>
            <span class="entity-name">{String(c.type)}</span>
            <span class="note">{entitiesOf(c)}</span>
            <button type="button" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move card ${i + 1} up`}>
              ↑
            </button>
            <button
              type="button"
              disabled={i === cards.length - 1}
              onClick={() => move(i, 1)}
              aria-label={`Move card ${i + 1} down`}
            >
              ↓
            </button>
            <button
              type="button"
              class="danger"
              onClick={() => setCards(cards.filter((_, j) => j !== i))}
              aria-label={`Remove card ${i + 1}`}
            >
              Remove
            </button>
          </li>
        ))}
      </ol>
      <form class="add-card" onSubmit={add}>
        <label>
          Card type
          <select
            value={type}
            onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value as (typeof TYPES)[number])}
          >
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        {type === 'markdown' ? (
          <label>
            Markdown
            <textarea
              name="markdown"
              required
              rows={3}
              value={content}
              onInput={(e) => setContent((e.currentTarget as HTMLTextAreaElement).value)}
            />
          </label>
        ) : (
          <label>
            Entity
            <select value={entity || ids[0]} onChange={(e) => setEntity((e.currentTarget as HTMLSelectElement).value)}>
              {ids.map((id) => {
                const s = live.states.get(id)!;
                return <option key={id} value={id}>{`${displayName(s)} (${id})`}</option>;
              })}
            </select>
          </label>
        )}
        <button type="submit" disabled={type !== 'markdown' && ids.length === 0}>
          Add card
        </button>
      </form>
      <Alert message={error} />
      <p class="actions">
        <button type="button" disabled={busy} onClick={() => void save()}>
          Save dashboard
        </button>
        <button type="button" class="secondary" onClick={() => onDone(null)}>
          Cancel
        </button>
      </p>
    </section>
  );
}
