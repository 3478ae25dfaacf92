import { describe, expect, it } from 'vitest';
import type { Edge } from '../edge.ts';
import { useEdge } from '../testing/use-edge.ts';

/** POST /v1/ha/relay on a real edge (what the cloud's HA API relays), over plain HTTP with a local token. */

let edge: Edge;
let token: string;

useEdge({}, (started) => {
  edge = started;
  token = edge.tokens.create('relay').token;
});

async function relay(body: unknown) {
  const res = await fetch(`http://127.0.0.1:${edge.ports.http}/v1/ha/relay`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

describe('POST /v1/ha/relay', () => {
  it("answers in HA's result envelope: results, and HA's errors with their codes", async () => {
    expect(
      await relay({ op: 'validate_config', kind: 'trigger', config: { platform: 'state', entity_id: 'sensor.x' } }),
    ).toEqual({
      status: 200,
      json: { success: true, result: null },
    });
    const set = await relay({
      op: 'set_state',
      entity_id: 'sensor.relayed',
      state: '7',
      attributes: {},
      force_update: false,
    });
    expect(set.json).toMatchObject({
      success: true,
      result: { created: true, state: { entity_id: 'sensor.relayed', state: '7' } },
    });
    const start = Date.now() / 1000 - 60;
    const history = await relay({
      op: 'history',
      query: {
        format: 'websocket',
        start,
        entity_ids: ['sensor.relayed'],
        include_start_time_state: true,
        significant_changes_only: false,
        minimal_response: true,
        no_attributes: true,
      },
    });
    expect(history.json.result['sensor.relayed'].map((x: { s: string }) => x.s)).toEqual(['7']);
    expect(await relay({ op: 'remove_state', entity_id: 'sensor.relayed' })).toEqual({
      status: 200,
      json: { success: true, result: true },
    });
    expect((await relay({ op: 'execute_script', sequence: [{ nonsense: 1 }], variables: {} })).json).toMatchObject({
      success: false,
      error: { code: 'invalid_format' },
    });
    expect((await relay({ op: 'history' })).status).toBe(400);
  });

  it('subscribe_trigger: only through the tunnel (the cloud); armed under the cloud’s id until unsubscribed', async () => {
    const subscribe = { op: 'subscribe_trigger', subscription: 's-1', trigger: { platform: 'state' }, variables: {} };
    // a local token holder would make the edge send events into the tunnel
    expect((await relay({ ...subscribe, trigger: { platform: 'time_pattern', seconds: '/1' } })).json).toEqual({
      success: false,
      error: { code: 'unauthorized', message: 'Trigger subscriptions are made by the cloud, through the tunnel.' },
    });
    const viaTunnel = async (body: unknown) => {
      const req = new Request('http://edge.internal/v1/ha/relay', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await edge.app.fetch(req, { trusted: { via: 'cloud' } })).json() as Promise<any>;
    };
    expect((await viaTunnel(subscribe)).error.code).toBe('invalid_format');
    expect(edge.cloudTriggers.ids).toEqual([]);
    const armed = await viaTunnel({ ...subscribe, trigger: { platform: 'state', entity_id: 'sensor.x' } });
    expect([armed, edge.cloudTriggers.ids]).toEqual([{ success: true, result: null }, ['s-1']]);
    expect(await viaTunnel({ op: 'unsubscribe_trigger', subscription: 's-1' })).toEqual({
      success: true,
      result: true,
    });
    expect(await viaTunnel({ op: 'unsubscribe_trigger', subscription: 's-1' })).toEqual({
      success: true,
      result: false,
    });
    expect(edge.cloudTriggers.ids).toEqual([]);
  });
});
