import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Edge } from '../edge.ts';
import { connect, waitFor } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

/**
 * A write the local API acknowledges is committed before the answer, also when it changes
 * states (which MQTT otherwise writes behind): here the write-behind window is a minute, and
 * the database is read through a connection of its own, as after a kill -9 right after the answer.
 */
let edge: Edge;
let dataDir: string;
let token: string;

useEdge({ stateFlushMs: 60_000 }, async (started, dir) => {
  edge = started;
  dataDir = dir;
  token = edge.tokens.create('test').token;
  const c = await connect(edge, await edge.createMqttCredentials({ username: 'dev' }));
  // no state topic: an optimistic switch, whose state the service call sets
  await c.publishAsync(
    'homeassistant/switch/fan/config',
    JSON.stringify({ name: 'Fan', uniq_id: 'fan', cmd_t: 'fan/set' }),
    { qos: 1, retain: true },
  );
  await waitFor(() => edge.registry.getEntity('switch.fan'), 3000, 'switch');
  await c.endAsync();
});

const api = async (method: string, urlPath: string, body?: unknown) => {
  const res = await fetch(`http://127.0.0.1:${edge.ports.http}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

function onDisk(entityId: string): string | null | undefined {
  const db = new Database(path.join(dataDir, 'edge.db'), { readonly: true });
  try {
    return (
      db.prepare('SELECT state FROM states WHERE entity_id = ?').get(entityId) as { state: string | null } | undefined
    )?.state;
  } finally {
    db.close();
  }
}

describe('local API: acknowledged writes are committed before the answer', () => {
  it('a service call: the state it answers is on disk', async () => {
    const res = await api('POST', '/v1/services/switch/turn_on', { entity_id: 'switch.fan' });
    expect(res.status).toBe(200);
    expect(res.body.changed_states[0].state).toBe('on');
    expect(onDisk('switch.fan')).toBe('on');
  });

  it('a config flow that creates entities: their states are on disk', async () => {
    const start = await api('POST', '/v1/config_flow', { handler: 'demo' });
    const done = await api('POST', `/v1/config_flow/${start.body.flowId}/advance`, {});
    expect(done.body.type).toBe('create_entry');
    const demo = edge.states.all().filter((s) => s.platform === 'demo' && s.state !== null);
    expect(demo.length).toBeGreaterThan(0);
    for (const s of demo) expect(onDisk(s.entity_id), s.entity_id).toBe(s.state);
  });
});
