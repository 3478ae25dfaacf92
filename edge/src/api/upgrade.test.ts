import { describe, expect, it } from 'vitest';
import { probeUpgrade } from '@smarthome/protocol/server/upgrade-probe';
import type { Edge } from '../edge.ts';
import { useEdge } from '../testing/use-edge.ts';

/**
 * Issue #13 item 1 on the edge: a request asking to switch protocols gets an HTTP answer and
 * its connection is closed, whatever the path or auth (it used to stay open as keep-alive).
 */
let edge: Edge;
let base: string;
let token: string;
useEdge({}, (started) => {
  edge = started;
  base = `http://127.0.0.1:${edge.ports.http}`;
  token = edge.tokens.create('test').token;
});

describe.each(['websocket', 'h2c'] as const)('an Upgrade: %s request to the local API', (upgrade) => {
  it('to /healthz, an unknown path, and a route with and without a token: answered, then closed', async () => {
    const cases: Array<[string, Record<string, string> | undefined, number, unknown]> = [
      ['/healthz', undefined, 200, { status: 'ok' }],
      ['/v1/no-such-route', undefined, 404, { message: 'not found' }],
      ['/v1/entities/states', undefined, 401, { error: 'unauthorized' }],
      ['/v1/entities/states', { authorization: 'Bearer wrong' }, 401, { error: 'unauthorized' }],
      ['/v1/entities/states', { authorization: `Bearer ${token}` }, 200, []],
    ];
    for (const [path, headers, status, body] of cases) {
      const res = await probeUpgrade(base, path, { upgrade, headers });
      expect([path, res.status, res.body, res.closed]).toEqual([path, status, body, true]);
    }
  });
});
