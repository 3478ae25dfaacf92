import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { createTestSchema, testDatabaseUrl, type TestSchema } from '../testing/database.ts';

/**
 * PostgreSQL going away under a running cloud (a restart, a network cut): requests answer 503
 * {error:"database_unavailable"} with Retry-After instead of 500, /healthz says so, and
 * everything works again once the server is back, without restarting the cloud. The cut is a
 * TCP proxy between the cloud and the machine's PostgreSQL.
 */
const url = testDatabaseUrl();

class CuttableProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  private readonly target: { host: string; port: number };
  constructor(target: { host: string; port: number }) {
    this.target = target;
  }
  async up(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }
  async down(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe.skipIf(!url)('the cloud while PostgreSQL is unreachable [needs DATABASE_URL]', () => {
  let schema: TestSchema;
  let proxy: CuttableProxy;
  let t: TestCloud;
  afterAll(async () => {
    await t?.stop();
    await proxy?.down();
    await schema?.drop();
  });

  it('answers 503 database_unavailable (and /healthz 503) during the outage, and recovers by itself', async () => {
    schema = await createTestSchema(url!);
    const direct = new URL(schema.url);
    proxy = new CuttableProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    await proxy.up();
    const viaProxy = new URL(schema.url);
    viaProxy.port = String(proxy.port);
    t = await startTestCloud({ databaseUrl: viaProxy.toString() });
    const u = await t.user();
    expect((await t.get('/v1/account', { token: u.token })).status).toBe(200);

    await proxy.down();
    const during = await t.get('/v1/account', { token: u.token });
    expect(during.status).toBe(503);
    expect(during.body).toEqual({ error: 'database_unavailable' });
    expect(during.headers.get('retry-after')).toBe('1');
    const zones = await t.post('/v1/zones', {
      token: u.token,
      body: { name: 'Home', icon: 'mdi:home', latitude: 1, longitude: 2, radius: 100 },
    });
    expect(zones.status).toBe(503);
    const health = await t.get('/healthz');
    expect(health.status).toBe(503);
    expect(health.body).toEqual({ error: 'database_unavailable' });

    await proxy.up();
    expect((await t.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await t.get('/v1/account', { token: u.token })).status).toBe(200);
    expect(
      (
        await t.post('/v1/zones', {
          token: u.token,
          body: { name: 'Home', icon: 'mdi:home', latitude: 1, longitude: 2, radius: 100 },
        })
      ).status,
    ).toBe(201);
  });
});
