import { useApp } from '../app/context.ts';
import { useControls } from '../live/controls.ts';
import { displayName, domainOf, useLiveEntities, type LiveState } from '../live/states.ts';
import { Alert } from '../app/Alert.tsx';

const TOGGLES = new Set(['light', 'switch', 'fan', 'input_boolean']);

export function isToggle(entityId: string): boolean {
  return TOGGLES.has(domainOf(entityId));
}

export function formatState(s: LiveState | undefined): string {
  if (!s || s.state === null) return 'unknown';
  const unit = s.attributes.unit_of_measurement;
  return typeof unit === 'string' ? `${s.state} ${unit}` : s.state;
}

/** The live state of one entity with its controls (toggle, brightness), their failures and view-only. */
export function EntityControl({ entityId, big = false }: { entityId: string; big?: boolean }) {
  const { live, controls } = useApp();
  useLiveEntities(live, [entityId]);
  useControls(controls);
  const s = live.states.get(entityId);
  const name = s ? displayName(s) : entityId;
  const error = controls.errors.get(entityId);
  const viewOnly = controls.viewOnly.has(entityId);
  const disabled = !s || viewOnly || controls.pending.has(entityId) || s.state === 'unavailable';
  const on = s?.state === 'on';
  const brightness = typeof s?.attributes.brightness === 'number' ? s.attributes.brightness : null;
  const dimmable =
    domainOf(entityId) === 'light' &&
    (brightness !== null ||
      (Array.isArray(s?.attributes.supported_color_modes) &&
        (s.attributes.supported_color_modes as unknown[]).some((m) => m !== 'onoff')));
  return (
    <div class={big ? 'entity big' : 'entity'} data-entity={entityId}>
      <div class="entity-head">
        <span class="entity-name">{name}</span>
        {isToggle(entityId) ? (
          <button
            type="button"
            role="switch"
            aria-checked={on}
            aria-label={`${name}: ${on ? 'on' : 'off'}`}
            class="switch"
            disabled={disabled}
            onClick={() => void controls.call(entityId, on ? 'turn_off' : 'turn_on')}
          >
            <span class="knob" />
          </button>
        ) : (
          <span class="entity-state" aria-live="polite">
            {formatState(s)}
          </span>
        )}
      </div>
      {dimmable && (
        <label class="brightness">
          <span>Brightness</span>
          <input
            type="range"
            min={1}
            max={255}
            value={brightness ?? 0}
            disabled={disabled}
            onChange={(e) =>
              void controls.call(entityId, 'turn_on', {
                brightness: Number((e.currentTarget as HTMLInputElement).value),
              })
            }
          />
        </label>
      )}
      {viewOnly && <p class="note">View only: you cannot control this.</p>}
      {!s && <p class="note">No state yet (unknown entity, or its home is offline).</p>}
      <Alert message={error} />
    </div>
  );
}
