import { useEffect, useState } from 'preact/hooks';
import { api, describe } from '../api/http.ts';
import { useApp } from '../app/context.ts';
import { displayName, useLive } from '../live/states.ts';
import type { Card } from './card.ts';

interface Point {
  state: string;
  last_changed: string;
}

const ids = (card: Card): string[] =>
  (Array.isArray(card.entities) ? card.entities : typeof card.entity === 'string' ? [card.entity] : [])
    .map((e) => (typeof e === 'string' ? e : e && typeof e === 'object' ? (e as Card).entity : null))
    .filter((e): e is string => typeof e === 'string');

/** One entity's numeric history as an SVG line over the period (its states, stepped). */
function Line({ points, from, to }: { points: Point[]; from: number; to: number }) {
  const xs = points
    // Number('') and Number(null) are 0: only a non-empty text is a reading
    .map((p) => ({
      t: Date.parse(p.last_changed),
      v: typeof p.state === 'string' && p.state.trim() ? Number(p.state) : NaN,
    }))
    .filter((p) => Number.isFinite(p.v));
  if (xs.length === 0) return <p class="note">No numeric states in this period.</p>;
  const lo = Math.min(...xs.map((p) => p.v));
  const hi = Math.max(...xs.map((p) => p.v));
  const x = (t: number) => ((Math.max(t, from) - from) / Math.max(to - from, 1)) * 300;
  const y = (v: number) => 90 - ((v - lo) / (hi - lo || 1)) * 80;
  let d = '';
  xs.forEach((p, i) => {
    d += i === 0 ? `M${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}` : `H${x(p.t).toFixed(1)}V${y(p.v).toFixed(1)}`;
  });
  d += `H300`;
  return (
    <svg viewBox="0 0 300 100" class="history-line" role="img" aria-label={`from ${lo} to ${hi}`}>
      <path d={d} fill="none" stroke="currentColor" stroke-width="2" />
    </svg>
  );
}

/**
 * Lovelace's history-graph card: the period's states from GET /api/history/period (HA's REST
 * history) where the server has it (an edge; the cloud answers 404 until it relays history), else
 * the current state with the API's words.
 */
export function HistoryGraphCard({ card }: { card: Card }) {
  const { live } = useApp();
  useLive(live);
  const entities = ids(card);
  const hours = typeof card.hours_to_show === 'number' && card.hours_to_show > 0 ? card.hours_to_show : 24;
  const key = `${entities.join(',')}|${hours}`;
  const [result, setResult] = useState<{
    for: string;
    series?: Point[][];
    from?: number;
    to?: number;
    note?: string;
  } | null>(null);
  useEffect(() => {
    if (entities.length === 0) return;
    let current = true;
    const to = Date.now();
    const from = to - hours * 3600_000;
    const q = new URLSearchParams({ filter_entity_id: entities.join(','), end_time: new Date(to).toISOString() });
    api<Point[][]>('GET', `/api/history/period/${encodeURIComponent(new Date(from).toISOString())}?${q}`).then(
      (series) => current && setResult({ for: key, series, from, to }),
      (e: unknown) => current && setResult({ for: key, note: `History is not available here: ${describe(e)}` }),
    );
    return () => {
      current = false;
    };
  }, [key]);
  const r = result?.for === key ? result : null;
  return (
    <section class="card history-graph">
      <h2>{typeof card.title === 'string' ? card.title : 'History'}</h2>
      {entities.map((id, i) => {
        const s = live.states.get(id);
        const unit =
          typeof s?.attributes.unit_of_measurement === 'string' ? ` ${s.attributes.unit_of_measurement}` : '';
        return (
          <div key={id} class="history-row" data-entity={id}>
            <p>
              <span class="entity-name">{s ? displayName(s) : id}</span>{' '}
              <span class="value-now">
                {s?.state ?? 'unknown'}
                {unit}
              </span>
            </p>
            {r?.series && (
              <Line
                points={
                  r.series.find((list) => list[0] && (list[0] as Point & { entity_id?: string }).entity_id === id) ??
                  r.series[i] ??
                  []
                }
                from={r.from!}
                to={r.to!}
              />
            )}
          </div>
        );
      })}
      {!r && entities.length > 0 && <p class="note">Loading history…</p>}
      {r?.note && <p class="note">{r.note}</p>}
    </section>
  );
}
