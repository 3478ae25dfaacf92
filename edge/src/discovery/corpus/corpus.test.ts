import { afterAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { ws } from '@smarthome/protocol';
import type { Edge } from '../../edge.ts';
import { collector, connect, waitFor } from '../../testing/edge.ts';
import { useEdge } from '../../testing/use-edge.ts';
import { expandConfig } from '../abbreviations.ts';
import { commandTopicsOf } from '../config.ts';
import { DEVICE_TRIGGER_EVENT } from '../device-triggers.ts';
import { CORPUS } from './index.ts';
import { TIMESTAMP, type CorpusEntry } from './types.ts';

/**
 * The discovery corpus: real configs from zigbee2mqtt, Tasmota, ESPHome and Home Assistant's
 * MQTT documentation, each published to a real edge (real Aedes, real mqtt.js) and checked for
 * entity, device, state and attributes after sample payloads, and the exact command per service call.
 */

let edge: Edge;
let device: MqttClient;
let inbox: Awaited<ReturnType<typeof collector>>;
const fired: ws.BusEvent[] = [];

useEdge({}, async (started) => {
  edge = started;
  device = await connect(edge, await edge.createMqttCredentials({ username: 'corpus' }));
  const topics = new Set<string>();
  for (const e of CORPUS) for (const t of commandTopicsOf(expandConfig(e.config))) topics.add(t);
  inbox = await collector(device, [...topics]);
  edge.bus.on('event', (e) => {
    if (e.event.event_type === DEVICE_TRIGGER_EVENT) fired.push(e.event);
  });
});
afterAll(async () => {
  await device?.endAsync();
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

function expectState(e: CorpusEntry, want: { state?: string | null; attributes?: Record<string, unknown> }): void {
  const s = edge.states.get(e.entity_id as string);
  expect(s, `state of ${e.entity_id}`).toBeDefined();
  if (want.state !== undefined) {
    if (want.state === TIMESTAMP) expect(s?.state).toMatch(ISO);
    else expect(s?.state).toBe(want.state);
  }
  for (const [k, v] of Object.entries(want.attributes ?? {})) {
    if (v === undefined) expect(s?.attributes, `${e.entity_id} has no ${k}`).not.toHaveProperty(k);
    else expect(s?.attributes[k], `${e.entity_id} attribute ${k}`).toEqual(v);
  }
}

/** Retries `check` until it passes (the edge handles MQTT messages asynchronously). */
async function eventually(check: () => void, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      check();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

const text = (p: string | Record<string, unknown>) => (typeof p === 'string' ? p : JSON.stringify(p));

async function run(e: CorpusEntry): Promise<void> {
  await device.publishAsync(e.topic, JSON.stringify(e.config), { qos: 1, retain: true });
  if (!e.entity_id) return runTriggers(e);
  const record = await waitFor(() => edge.registry.getEntity(e.entity_id as string), 3000, `entity ${e.entity_id}`);
  if (e.friendly_name !== undefined) expect(record.name).toBe(e.friendly_name);
  // HA keeps entity_category in the entity registry, never in the state's attributes
  expect(record.entity_category).toBe(e.config.entity_category ?? e.config.ent_cat ?? null);
  if (e.device) {
    expect(record.device_registry_id).not.toBeNull();
    expect(edge.registry.getDevice(record.device_registry_id as number)).toMatchObject(e.device);
  }
  if (e.disabled) {
    // registered disabled (HA's disabled_by integration): no state at all, whatever its topics say
    for (const step of e.steps ?? []) await device.publishAsync(step.topic, text(step.payload), { qos: 1 });
    await new Promise((r) => setTimeout(r, 100));
    expect(edge.states.get(e.entity_id)).toBeUndefined();
    expect(edge.registry.getEntity(e.entity_id)?.disabled_by).toBe('integration');
    return;
  }
  await eventually(() => expectState(e, { state: e.initial?.state, attributes: e.initial?.attributes }));
  expect(edge.states.get(e.entity_id)?.attributes).not.toHaveProperty('entity_category');
  if (e.friendly_name !== undefined)
    expect(edge.states.get(e.entity_id)?.attributes.friendly_name).toBe(e.friendly_name);
  for (const step of e.steps ?? []) {
    await device.publishAsync(step.topic, text(step.payload), { qos: 1 });
    await eventually(() => expectState(e, step));
  }
  for (const c of e.commands ?? []) {
    await edge.callService(e.entity_id.split('.')[0], c.service, e.entity_id, c.data ?? {});
    const got = c.publish.length ? (await inbox.next(c.publish.length)).map((m) => `${m.topic} ${m.payload}`) : [];
    expect(got, `${c.service} ${JSON.stringify(c.data ?? {})}`).toEqual(c.publish);
    if (c.state !== undefined || c.attributes) await eventually(() => expectState(e, c));
  }
}

async function runTriggers(e: CorpusEntry): Promise<void> {
  const cfg = expandConfig(e.config);
  if (e.device) await waitFor(() => edge.registry.findDevice(idsOf(cfg)), 3000, 'trigger device');
  const dev = edge.registry.findDevice(idsOf(cfg));
  expect(dev).toMatchObject(e.device ?? {});
  await waitFor(
    () => edge.discovery.triggers.list().some((t) => t.topic === cfg.topic && t.subtype === cfg.subtype),
    3000,
    'trigger',
  );
  for (const t of e.triggers ?? []) {
    const before = fired.length;
    await device.publishAsync(cfg.topic as string, t.payload, { qos: 1 });
    if (t.fires) {
      await waitFor(
        () => fired.slice(before).find((f) => f.data.subtype === cfg.subtype && f.data.type === cfg.type),
        2000,
        `trigger ${t.payload}`,
      );
      const f = fired.slice(before).find((x) => x.data.subtype === cfg.subtype && x.data.type === cfg.type);
      expect(f?.data).toMatchObject({
        domain: 'mqtt',
        device_id: String(dev?.id),
        type: cfg.type,
        subtype: cfg.subtype,
        topic: cfg.topic,
        payload: t.payload,
      });
    } else {
      await new Promise((r) => setTimeout(r, 100));
      expect(fired.slice(before).filter((f) => f.data.subtype === cfg.subtype && f.data.type === cfg.type)).toEqual([]);
    }
  }
}

function idsOf(cfg: Record<string, unknown>): string[] {
  const dev = cfg.device as Record<string, unknown>;
  const ids = dev.identifiers;
  return Array.isArray(ids) ? ids.map(String) : [String(ids)];
}

describe('MQTT discovery corpus', () => {
  it('has at least 60 entries with unique ids, each naming its source', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(CORPUS.map((e) => e.id)).size).toBe(CORPUS.length);
    for (const e of CORPUS) expect(e.source, e.id).toMatch(/\S+ \S+/);
  });

  for (const e of CORPUS) {
    if (e.needsJinja) it.skip(`${e.id} [needs Jinja templates: issue #18 template engine]`, () => {});
    else it(e.id, () => run(e));
  }
});
