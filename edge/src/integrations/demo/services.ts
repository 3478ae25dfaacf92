/**
 * What a demo entity does on a service call, like a real device would: the new state is
 * computed from the current one and the call's data. Bad data throws ServiceError (→ 400).
 */
import { ServiceError } from '../../errors.ts';

export interface DemoState {
  state: string;
  attributes: Record<string, unknown>;
}

export const DEMO_SERVICES: Readonly<Record<string, readonly string[]>> = {
  light: ['toggle', 'turn_off', 'turn_on'],
  switch: ['toggle', 'turn_off', 'turn_on'],
  cover: ['close_cover', 'open_cover', 'set_cover_position', 'stop_cover', 'toggle'],
};

function numberArg(data: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  const raw = data[key];
  if (raw === undefined || raw === null) return undefined;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(n) || n < min || n > max)
    throw new ServiceError(`${key} must be a number from ${min} to ${max}`);
  return n;
}

const LIGHT_MODES = { supported_color_modes: ['brightness'] };

function lightOn(current: DemoState, data: Record<string, unknown>): DemoState {
  const b = numberArg(data, 'brightness', 0, 255);
  const pct = numberArg(data, 'brightness_pct', 0, 100);
  const previous =
    typeof current.attributes.brightness === 'number' && current.attributes.brightness > 0
      ? current.attributes.brightness
      : 255;
  const brightness = b !== undefined ? Math.round(b) : pct !== undefined ? Math.round((pct * 255) / 100) : previous;
  // HA semantics: turning on with brightness 0 turns the light off.
  if (brightness === 0) return lightOff();
  return { state: 'on', attributes: { brightness, color_mode: 'brightness', ...LIGHT_MODES } };
}

function lightOff(): DemoState {
  return { state: 'off', attributes: { brightness: null, color_mode: null, ...LIGHT_MODES } };
}

function coverAt(position: number, current: DemoState): DemoState {
  return { state: position > 0 ? 'open' : 'closed', attributes: { ...current.attributes, current_position: position } };
}

/** The entity's next state after `domain.service` with `data`. */
export function applyDemoService(
  domain: string,
  service: string,
  current: DemoState,
  data: Record<string, unknown>,
): DemoState {
  switch (`${domain}.${service}`) {
    case 'light.turn_on':
      return lightOn(current, data);
    case 'light.turn_off':
      return lightOff();
    case 'light.toggle':
      return current.state === 'on' ? lightOff() : lightOn(current, data);
    case 'switch.turn_on':
      return { state: 'on', attributes: current.attributes };
    case 'switch.turn_off':
      return { state: 'off', attributes: current.attributes };
    case 'switch.toggle':
      return { state: current.state === 'on' ? 'off' : 'on', attributes: current.attributes };
    case 'cover.open_cover':
      return coverAt(100, current);
    case 'cover.close_cover':
      return coverAt(0, current);
    case 'cover.toggle':
      return coverAt(current.state === 'closed' || current.state === 'closing' ? 100 : 0, current);
    case 'cover.set_cover_position': {
      const position = numberArg(data, 'position', 0, 100);
      if (position === undefined) throw new ServiceError('position is required');
      return coverAt(Math.round(position), current);
    }
    case 'cover.stop_cover': {
      const p = current.attributes.current_position;
      return coverAt(typeof p === 'number' ? p : 0, current);
    }
    default:
      throw new ServiceError(`${domain}.${service} is not supported by demo entities`);
  }
}
