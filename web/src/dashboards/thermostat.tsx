import { useApp } from '../app/context.ts';
import { useControls } from '../live/controls.ts';
import { displayName, useLive } from '../live/states.ts';
import type { Card } from './card.ts';
import { Alert } from '../app/Alert.tsx';

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** A climate entity: current and target temperature (−/+ by its step, within its range) and its HVAC mode. */
export function ThermostatCard({ card }: { card: Card }) {
  const { live, controls } = useApp();
  useLive(live);
  useControls(controls);
  const id = typeof card.entity === 'string' ? card.entity : '';
  const s = live.states.get(id);
  const a = s?.attributes ?? {};
  const name = typeof card.name === 'string' ? card.name : s ? displayName(s) : id;
  const target = num(a.temperature);
  const step = num(a.target_temp_step) ?? 0.5;
  const min = num(a.min_temp) ?? 7;
  const max = num(a.max_temp) ?? 35;
  const unit = typeof a.unit_of_measurement === 'string' ? a.unit_of_measurement : '°';
  const modes = Array.isArray(a.hvac_modes) ? (a.hvac_modes as unknown[]).map(String) : [];
  const disabled = !s || controls.viewOnly.has(id) || controls.pending.has(id) || s.state === 'unavailable';
  const error = controls.errors.get(id);
  const set = (by: number) => {
    const next = Math.round(Math.min(max, Math.max(min, (target ?? min) + by)) / step) * step;
    void controls.call(id, 'set_temperature', { temperature: Number(next.toFixed(2)) });
  };
  return (
    <section class="card thermostat" data-entity={id}>
      <h2>{name}</h2>
      <p class="note">
        Now: <span class="current">{num(a.current_temperature) ?? '–'}</span> {unit}
      </p>
      <div class="target-row">
        <button
          type="button"
          disabled={disabled || target === null || target <= min}
          onClick={() => set(-step)}
          aria-label={`Lower ${name} target`}
        >
          −
        </button>
        <p class="value" aria-live="polite">
          <span class="target">{target ?? '–'}</span> {unit}
        </p>
        <button
          type="button"
          disabled={disabled || target === null || target >= max}
          onClick={() => set(step)}
          aria-label={`Raise ${name} target`}
        >
          +
        </button>
      </div>
      {modes.length > 0 && (
        <label>
          Mode
          <select
            value={s?.state ?? ''}
            disabled={disabled}
            onChange={(e) =>
              void controls.call(id, 'set_hvac_mode', { hvac_mode: (e.currentTarget as HTMLSelectElement).value })
            }
          >
            {modes.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
      )}
      {controls.viewOnly.has(id) && <p class="note">View only: you cannot control this.</p>}
      {!s && <p class="note">No state yet (unknown entity, or its home is offline).</p>}
      <Alert message={error} />
    </section>
  );
}
