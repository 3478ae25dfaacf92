import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Aedes, type AuthenticateError } from 'aedes';
import type { InMemoryConfigEntryStore } from '../../config-flow/memory-ports.ts';
import { serveConfigFlows, type ConfigFlowHarness } from '../../testing/config-flow.ts';
import type { TestServer } from '../../testing/server.ts';
import {
  createConnectCheck,
  createMqttIntegration,
  isValidHost,
  type BrokerSettings,
  type ConnectOutcome,
} from './index.ts';

describe('mqtt config flow', () => {
  let h: ConfigFlowHarness<object>;
  let server: TestServer;
  let store: InMemoryConfigEntryStore;
  let clock: number;
  let outcome: ConnectOutcome | 'throw';
  let checked: BrokerSettings[];

  beforeEach(async () => {
    clock = 0;
    outcome = 'ok';
    checked = [];
    h = await serveConfigFlows({
      integrations: () => [
        createMqttIntegration({
          connectCheck: async (s) => {
            checked.push(s);
            if (outcome === 'throw') throw new Error('socket exploded');
            return outcome;
          },
        }),
      ],
      flowTtlMs: 10 * 60_000,
      now: () => clock,
    });
    ({ server, store } = h);
  });
  afterEach(() => h.close());

  const start = async () => {
    const res = await server.json('POST', '/v1/config_flow', { handler: 'mqtt' });
    expect(res.status).toBe(200);
    return res.body as {
      flowId: string;
      type: string;
      stepId: string;
      data_schema: { name: string; type: string }[];
      errors: object;
    };
  };
  const advance = (flowId: string, body: object) => server.json('POST', `/v1/config_flow/${flowId}/advance`, body);

  it('starts with the broker form', async () => {
    const form = await start();
    expect(form).toMatchObject({ type: 'form', handler: 'mqtt', stepId: 'user', errors: {} });
    expect(form.data_schema.map((f) => [f.name, f.type])).toEqual([
      ['host', 'string'],
      ['port', 'integer'],
      ['username', 'string'],
      ['password', 'password'],
    ]);
  });

  it('answers errors per field for wrong input without trying to connect', async () => {
    const { flowId } = await start();
    expect((await advance(flowId, { host: 'bad host!', port: 70000 })).body).toMatchObject({
      type: 'form',
      stepId: 'user',
      errors: { host: 'invalid_host', port: 'invalid_port' },
    });
    expect((await advance(flowId, { port: 'abc' })).body.errors).toEqual({ host: 'required', port: 'invalid_integer' });
    expect((await advance(flowId, { host: 'broker.local', password: 'p' })).body.errors).toEqual({
      username: 'username_required',
    });
    expect(checked).toEqual([]);
  });

  it('answers base: cannot_connect / invalid_auth when the check fails, then succeeds on retry', async () => {
    const { flowId } = await start();
    outcome = 'cannot_connect';
    expect((await advance(flowId, { host: '192.0.2.1', port: '1883' })).body).toMatchObject({
      type: 'form',
      stepId: 'user',
      errors: { base: 'cannot_connect' },
    });
    outcome = 'throw';
    expect((await advance(flowId, { host: '192.0.2.1' })).body.errors).toEqual({ base: 'cannot_connect' });
    outcome = 'invalid_auth';
    expect((await advance(flowId, { host: '192.0.2.1', username: 'u', password: 'bad' })).body.errors).toEqual({
      base: 'invalid_auth',
    });
    outcome = 'ok';
    const done = await advance(flowId, { host: 'broker.local', port: 8883, username: 'u', password: 'good' });
    expect(done.body).toEqual({
      type: 'create_entry',
      flowId,
      handler: 'mqtt',
      stepId: 'done',
      title: 'MQTT broker.local:8883',
      result: { config_entry_id: 1 },
    });
    expect(checked.at(-1)).toEqual({ host: 'broker.local', port: 8883, username: 'u', password: 'good' });
    expect(store.get(1)).toMatchObject({
      domain: 'mqtt',
      state: 'loaded',
      data: { host: 'broker.local', port: 8883, username: 'u', password: 'good' },
    });
    const list = await server.json('GET', '/v1/config_entries');
    expect(JSON.stringify(list.body)).not.toContain('good');
  });

  it('aborts with already_configured for the same broker', async () => {
    const a = await start();
    await advance(a.flowId, { host: 'broker.local' });
    const b = await start();
    expect((await advance(b.flowId, { host: 'broker.local', port: 1883 })).body).toEqual({
      type: 'abort',
      flowId: b.flowId,
      handler: 'mqtt',
      reason: 'already_configured',
    });
    expect(store.list()).toHaveLength(1);
  });

  it('expires an abandoned flow', async () => {
    const { flowId } = await start();
    clock += 10 * 60_000 + 1;
    expect(await advance(flowId, { host: 'broker.local' })).toEqual({
      status: 404,
      body: { message: 'flow not found' },
    });
    expect(store.list()).toEqual([]);
  });

  it('validates host names', () => {
    for (const ok of ['broker', 'mqtt.example.com', '10.0.0.2', '::1', '[fe80::1]', 'a-b.c'])
      expect(isValidHost(ok)).toBe(true);
    for (const bad of ['', 'a b', '-a.com', 'a..b', 'http://x', 'x/y', 'a'.repeat(64) + '.com'])
      expect(isValidHost(bad)).toBe(false);
  });
});

describe('mqtt connect check against a real broker', () => {
  let broker: Aedes;
  let tcp: Server;
  let port: number;
  beforeAll(async () => {
    broker = await Aedes.createBroker();
    broker.authenticate = (_client, username, password, done) => {
      if (username === 'edge' && password?.toString() === 'secret') return done(null, true);
      const err = new Error('bad credentials') as AuthenticateError;
      err.returnCode = 4;
      done(err, null);
    };
    tcp = createServer(broker.handle);
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    port = (tcp.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => broker.close(() => r()));
    await new Promise<void>((r) => tcp.close(() => r()));
  });

  it('connects with good credentials, reports invalid_auth and cannot_connect', async () => {
    const check = createConnectCheck(2000);
    expect(await check({ host: '127.0.0.1', port, username: 'edge', password: 'secret' })).toBe('ok');
    expect(await check({ host: '127.0.0.1', port, username: 'edge', password: 'wrong' })).toBe('invalid_auth');
    // A port nobody listens on.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(await check({ host: '127.0.0.1', port: freePort })).toBe('cannot_connect');
  });
});
