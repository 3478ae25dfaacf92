import { useApp } from '../app/context.ts';
import type { Card } from './card.ts';
import { useLiveEntities } from '../live/states.ts';
import { EntityControl, formatState } from './entity.tsx';
import { HistoryGraphCard } from './history.tsx';
import { MarkdownCard } from './markdown.tsx';
import { MediaControlCard } from './media.tsx';
import { ThermostatCard } from './thermostat.tsx';

const entityOf = (card: Card): string => (typeof card.entity === 'string' ? card.entity : '');
const rowEntity = (row: unknown): string =>
  typeof row === 'string'
    ? row
    : row && typeof row === 'object' && typeof (row as Card).entity === 'string'
      ? ((row as Card).entity as string)
      : '';

function EntitiesCard({ card }: { card: Card }) {
  const rows = Array.isArray(card.entities) ? card.entities.map(rowEntity).filter(Boolean) : [];
  return (
    <section class="card">
      {typeof card.title === 'string' && <h2>{card.title}</h2>}
      {rows.map((id) => (
        <EntityControl key={id} entityId={id} />
      ))}
    </section>
  );
}

function TileCard({ card }: { card: Card }) {
  return (
    <section class="card tile">
      <EntityControl entityId={entityOf(card)} big />
    </section>
  );
}

function SensorCard({ card }: { card: Card }) {
  const { live } = useApp();
  const id = entityOf(card);
  useLiveEntities(live, [id]);
  const s = live.states.get(id);
  const name =
    typeof card.name === 'string' ? card.name : ((s?.attributes.friendly_name as string | undefined) ?? s?.name ?? id);
  return (
    <section class="card sensor" data-entity={id}>
      <h2>{name}</h2>
      <p class="value" aria-live="polite">
        {formatState(s)}
      </p>
    </section>
  );
}

function GaugeCard({ card }: { card: Card }) {
  const { live } = useApp();
  const id = entityOf(card);
  useLiveEntities(live, [id]);
  const s = live.states.get(id);
  const min = typeof card.min === 'number' ? card.min : 0;
  const max = typeof card.max === 'number' ? card.max : 100;
  const value = Number(s?.state);
  const name =
    typeof card.name === 'string' ? card.name : ((s?.attributes.friendly_name as string | undefined) ?? s?.name ?? id);
  return (
    <section class="card gauge" data-entity={id}>
      <h2>{name}</h2>
      <meter min={min} max={max} value={Number.isFinite(value) ? value : min} aria-label={name} />
      <p class="value" aria-live="polite">
        {formatState(s)}
      </p>
    </section>
  );
}

export function CardView({ card }: { card: Card }) {
  switch (card.type) {
    case 'entities':
      return <EntitiesCard card={card} />;
    case 'tile':
    case 'button':
    case 'light':
      return <TileCard card={card} />;
    case 'sensor':
      return <SensorCard card={card} />;
    case 'gauge':
      return <GaugeCard card={card} />;
    case 'thermostat':
      return <ThermostatCard card={card} />;
    case 'markdown':
      return <MarkdownCard card={card} />;
    case 'history-graph':
      return <HistoryGraphCard card={card} />;
    case 'media-control':
      return <MediaControlCard card={card} />;
    default:
      return (
        <section class="card">
          <p class="note">Card type “{String(card.type)}” is not shown by the portal yet.</p>
        </section>
      );
  }
}
