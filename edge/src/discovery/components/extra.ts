import { ServiceError } from '../../errors.ts';
import { parseJsonOrUndefined } from '../../templates/template.ts';
import { commandPayload, command, isOptimistic, numberArg, optStr, str, strList, value } from './helpers.ts';
import { type Cfg, type Component, type Ctx, type ServiceResult, type Update } from './types.ts';
import { isJsonObject } from '@smarthome/protocol/common';

/** Event, siren, update and scene, as Home Assistant's mqtt/event.py, siren.py, update.py, scene.py. */

const pick = (cfg: Cfg, keys: string[]): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (cfg[k] !== undefined && cfg[k] !== null) out[k] = cfg[k];
  return out;
};
const needs = (cfg: Cfg, key: string) => (optStr(cfg, key) ? null : `${key} is required`);

// ---- event ----
// State: the time of the last event; attributes: event_types, event_type and the payload's other keys.
export const eventComponent: Component = {
  domain: 'event',
  validate: (cfg) =>
    needs(cfg, 'state_topic') ?? (strList(cfg, 'event_types', []).length === 0 ? 'event_types are required' : null),
  staticAttributes: (cfg) => ({
    event_types: strList(cfg, 'event_types', []),
    ...pick(cfg, ['device_class', 'icon']),
  }),
  initialAttributes: () => ({ event_type: null }),
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'value_template', payload);
      const doc = parseJsonOrUndefined(v);
      if (!isJsonObject(doc) || doc.event_type === undefined || doc.event_type === null) return null;
      const type = String(doc.event_type);
      if (!strList(ctx.cfg, 'event_types', []).includes(type)) return null;
      // the previous event's own attributes do not survive the next event
      const attrs: Record<string, unknown> = {};
      for (const k of Object.keys(ctx.attrs)) attrs[k] = undefined;
      for (const [k, val] of Object.entries(doc)) if (k !== 'event_type' && k !== '__proto__') attrs[k] = val;
      attrs.event_type = type;
      return { state: new Date().toISOString(), attrs, force: true };
    },
  },
  // an event whose template fails did not happen: the last event stays
  failedValue: { state_topic: null },
  services: {},
};

// ---- siren ----
const SIREN_ON = 1,
  SIREN_OFF = 2,
  SIREN_TONES = 4,
  SIREN_VOLUME = 8,
  SIREN_DURATION = 16;
const sirenFeatures = (cfg: Cfg) =>
  SIREN_ON |
  SIREN_OFF |
  (strList(cfg, 'available_tones', []).length ? SIREN_TONES : 0) |
  (cfg.support_volume_set === false ? 0 : SIREN_VOLUME) |
  (cfg.support_duration === false ? 0 : SIREN_DURATION);

/** turn_on parameters the siren supports (HA filters out the rest). */
function sirenParams(cfg: Cfg, data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const f = sirenFeatures(cfg);
  if (data.tone !== undefined && f & SIREN_TONES) {
    const tones = strList(cfg, 'available_tones', []);
    const tone = String(data.tone);
    if (!tones.includes(tone)) throw new ServiceError(`tone must be one of: ${tones.join(', ')}`);
    out.tone = tone;
  }
  if (f & SIREN_VOLUME) {
    const v = numberArg(data, 'volume_level', { min: 0, max: 1 });
    if (v !== undefined) out.volume_level = v;
  }
  if (f & SIREN_DURATION) {
    const d = numberArg(data, 'duration', { min: 0 });
    if (d !== undefined) out.duration = Math.round(d);
  }
  return out;
}

/** Without a command template the siren publishes JSON: {"state": <payload>, tone/volume_level/duration…}. */
function sirenPublish(ctx: Ctx, tplKey: string, payload: string, vars: Record<string, unknown>): string {
  const tpl = optStr(ctx.cfg, tplKey) ?? optStr(ctx.cfg, 'command_template');
  const all = { state: payload, ...vars };
  return tpl ? ctx.tpl.render(tpl, { value: payload, ...all }) : JSON.stringify(all);
}

function sirenOn(ctx: Ctx, data: Record<string, unknown>): ServiceResult {
  const params = sirenParams(ctx.cfg, data);
  const payload = sirenPublish(ctx, 'command_template', str(ctx.cfg, 'payload_on', 'ON'), params);
  return {
    commands: [command(ctx, 'command_topic', payload)],
    optimistic: isOptimistic(ctx.cfg) ? { state: 'on', attrs: params } : undefined,
  };
}
function sirenOff(ctx: Ctx): ServiceResult {
  const payload = sirenPublish(ctx, 'command_off_template', str(ctx.cfg, 'payload_off', 'OFF'), {});
  return {
    commands: [command(ctx, 'command_topic', payload)],
    optimistic: isOptimistic(ctx.cfg) ? { state: 'off' } : undefined,
  };
}

export const sirenComponent: Component = {
  domain: 'siren',
  validate: (cfg) => needs(cfg, 'command_topic'),
  staticAttributes: (cfg) => {
    const attrs: Record<string, unknown> = {
      ...pick(cfg, ['icon']),
      supported_features: sirenFeatures(cfg),
    };
    if (strList(cfg, 'available_tones', []).length) attrs.available_tones = strList(cfg, 'available_tones', []);
    return attrs;
  },
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'state_value_template', payload);
      if (v === '' || v === '{}') return null;
      const on = str(ctx.cfg, 'state_on', str(ctx.cfg, 'payload_on', 'ON'));
      const off = str(ctx.cfg, 'state_off', str(ctx.cfg, 'payload_off', 'OFF'));
      let doc: Record<string, unknown>;
      if (v === on || v === off || v === 'None') doc = { state: v };
      else {
        const parsed = parseJsonOrUndefined(v);
        if (!isJsonObject(parsed)) return null;
        doc = parsed;
      }
      const update: Update = {};
      if (doc.state === on) update.state = 'on';
      else if (doc.state === off) update.state = 'off';
      else if (doc.state === 'None' || doc.state === null) update.state = null;
      const attrs: Record<string, unknown> = {};
      const f = sirenFeatures(ctx.cfg);
      if (doc.tone !== undefined && f & SIREN_TONES) attrs.tone = doc.tone;
      if (typeof doc.volume_level === 'number' && f & SIREN_VOLUME) attrs.volume_level = doc.volume_level;
      if (typeof doc.duration === 'number' && f & SIREN_DURATION) attrs.duration = doc.duration;
      if (Object.keys(attrs).length) update.attrs = attrs;
      return update.state === undefined && !update.attrs ? null : update;
    },
  },
  services: {
    turn_on: sirenOn,
    turn_off: (ctx) => sirenOff(ctx),
    toggle: (ctx, data) => (ctx.state === 'on' ? sirenOff(ctx) : sirenOn(ctx, data)),
  },
};

// ---- update ----
const UPDATE_INSTALL = 1;
const UPDATE_KEYS = [
  'installed_version',
  'latest_version',
  'title',
  'release_summary',
  'release_url',
  'entity_picture',
  'in_progress',
  'update_percentage',
];

/** HA's update state: on when latest is newer than installed (unknown when either is missing). */
function updateState(attrs: Record<string, unknown>): string | null {
  const installed = attrs.installed_version,
    latest = attrs.latest_version;
  if (typeof installed !== 'string' || typeof latest !== 'string') return null;
  if (latest === installed || latest === attrs.skipped_version) return 'off';
  const parts = (v: string) => v.replace(/^v/i, '').split(/[.-]/).map(Number);
  const a = parts(latest),
    b = parts(installed);
  if (a.some(Number.isNaN) || b.some(Number.isNaN)) return 'on';
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d > 0 ? 'on' : 'off';
  }
  return 'off';
}
const withUpdateState = (ctx: Ctx, attrs: Record<string, unknown>): Update => ({
  state: updateState({ ...ctx.attrs, ...attrs }),
  attrs,
});

export const updateComponent: Component = {
  domain: 'update',
  validate: () => null,
  staticAttributes: (cfg) => ({
    ...pick(cfg, ['device_class', 'entity_picture', 'title', 'release_summary', 'release_url']),
    supported_features: optStr(cfg, 'command_topic') ? UPDATE_INSTALL : 0,
  }),
  initialAttributes: (cfg) => ({
    auto_update: false,
    display_precision: typeof cfg.display_precision === 'number' ? cfg.display_precision : 0,
    installed_version: null,
    in_progress: false,
    latest_version: null,
    skipped_version: null,
    update_percentage: null,
  }),
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'value_template', payload);
      if (v === '') return null;
      const parsed = parseJsonOrUndefined(v);
      const doc: Record<string, unknown> = isJsonObject(parsed) ? parsed : { installed_version: v };
      const attrs: Record<string, unknown> = {};
      for (const k of UPDATE_KEYS)
        if (doc[k] !== undefined) attrs[k] = k.endsWith('version') && doc[k] !== null ? String(doc[k]) : doc[k];
      if (typeof attrs.update_percentage === 'number' && attrs.in_progress === undefined) attrs.in_progress = true;
      return Object.keys(attrs).length ? withUpdateState(ctx, attrs) : null;
    },
    latest_version_topic: (payload, ctx) => {
      const v = value(ctx, 'latest_version_template', payload);
      return v === '' ? null : withUpdateState(ctx, { latest_version: v });
    },
  },
  failedValue: { latest_version_topic: (ctx) => withUpdateState(ctx, { latest_version: null }) },
  services: {
    install: (ctx) => ({
      commands: [
        command(
          ctx,
          'command_topic',
          commandPayload(ctx, 'command_template', str(ctx.cfg, 'payload_install', 'install')),
        ),
      ],
    }),
    // skipping is the entity's own bookkeeping in HA: nothing is published
    skip: (ctx) => {
      const latest = ctx.attrs.latest_version;
      if (typeof latest !== 'string') throw new ServiceError('no update to skip');
      return { commands: [], optimistic: withUpdateState(ctx, { skipped_version: latest }) };
    },
    clear_skipped: (ctx) => ({ commands: [], optimistic: withUpdateState(ctx, { skipped_version: null }) }),
  },
};

// ---- scene ----
// A scene is stateless on the device; its state is the time it was last activated.
export const sceneComponent: Component = {
  domain: 'scene',
  validate: (cfg) => needs(cfg, 'command_topic'),
  staticAttributes: (cfg) => pick(cfg, ['icon']),
  stateHandlers: {},
  services: {
    turn_on: (ctx) => ({
      commands: [command(ctx, 'command_topic', str(ctx.cfg, 'payload_on', 'ON'))],
      optimistic: { state: new Date().toISOString() },
    }),
  },
};
