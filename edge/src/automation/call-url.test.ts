import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CallUrlError, UrlCaller, isPublicAddress } from './call-url.ts';
import { harness, until, type Harness } from '../testing/automation.ts';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function server(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  const received: Received[] = [];
  const s = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  return {
    s,
    received,
    listen: () => new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port))),
  };
}

describe('call_url', () => {
  const target = server((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  const big = server((_req, res) => {
    res.write('x'.repeat(600_000));
    res.end('y'.repeat(600_000));
  });
  const slow = server(() => {
    /* never answers */
  });
  let port = 0;
  let bigPort = 0;
  let slowPort = 0;
  beforeAll(async () => {
    port = await target.listen();
    bigPort = await big.listen();
    slowPort = await slow.listen();
  });
  afterAll(() => {
    target.s.close();
    big.s.close();
    slow.s.closeAllConnections();
    slow.s.close();
  });

  const replica = (extra: Partial<ConstructorParameters<typeof UrlCaller>[0]> = {}) =>
    new UrlCaller({ policy: 'public-only', ...extra });
  const refused = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CallUrlError);
    expect((err as CallUrlError).code).toBe('refused');
  };

  it('classifies addresses (ipaddr.js)', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      '::ffff:127.0.0.1',
      '224.0.0.1',
      '255.255.255.255',
    ]) {
      expect([a, isPublicAddress(a)]).toEqual([a, false]);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect([a, isPublicAddress(a)]).toEqual([a, true]);
  });

  it('a replica refuses loopback, metadata and names resolving to private addresses', async () => {
    await refused(replica().call({ method: 'GET', url: `http://127.0.0.1:${port}/` }));
    await refused(replica().call({ method: 'GET', url: 'http://169.254.169.254/latest/meta-data/' }));
    await refused(replica().call({ method: 'GET', url: 'http://[::1]:1/' }));
    await refused(replica().call({ method: 'GET', url: `http://localhost:${port}/` }));
    // DNS rebinding: the name resolves to a private address at connect time
    let lookups = 0;
    const rebinding = replica({
      resolve: async () =>
        lookups++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }],
    });
    lookups = 1;
    await refused(rebinding.call({ method: 'GET', url: `http://rebind.example:${port}/` }));
    expect(target.received).toHaveLength(0);
  });

  it('a replica refuses a redirect from an allowed host to a private one', async () => {
    const redirector = server((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${port}/secret` });
      res.end();
    });
    const rport = await redirector.listen();
    try {
      const caller = replica({
        allowList: ['allowed.test'],
        resolve: async (h) => (h === 'allowed.test' ? [{ address: '127.0.0.1', family: 4 }] : []),
      });
      await refused(caller.call({ method: 'GET', url: `http://allowed.test:${rport}/` }));
      expect(redirector.received).toHaveLength(1);
      expect(target.received).toHaveLength(0);
    } finally {
      redirector.s.close();
    }
  });

  it('a home edge calls LAN/loopback; redirects are followed (max 5), Authorization dropped across hosts', async () => {
    const edge = new UrlCaller({ policy: 'lan-allowed' });
    const res = await edge.call({
      method: 'POST',
      url: `http://127.0.0.1:${port}/hook`,
      headers: { Authorization: 'Bearer t' },
      body: { a: 1 },
    });
    expect(res).toMatchObject({ status: 200, json: { ok: true } });
    expect(target.received.at(-1)).toMatchObject({ method: 'POST', url: '/hook', body: '{"a":1}' });
    expect(target.received.at(-1)!.headers['content-type']).toBe('application/json');
    const hop = server((req, res) => {
      res.writeHead(307, { location: `http://localhost:${port}/moved` });
      res.end();
    });
    const hport = await hop.listen();
    await edge.call({
      method: 'POST',
      url: `http://127.0.0.1:${hport}/`,
      headers: { Authorization: 'Bearer t' },
      body: 'raw',
    });
    expect(target.received.at(-1)).toMatchObject({ method: 'POST', url: '/moved', body: 'raw' });
    expect(target.received.at(-1)!.headers.authorization).toBeUndefined();
    const loop = server((req, res) => {
      res.writeHead(302, { location: '/again' });
      res.end();
    });
    const lport = await loop.listen();
    await expect(edge.call({ method: 'GET', url: `http://127.0.0.1:${lport}/` })).rejects.toMatchObject({
      code: 'redirects',
    });
    expect(loop.received).toHaveLength(6);
    hop.s.close();
    loop.s.close();
  });

  it('caps the response size and times out', async () => {
    const edge = new UrlCaller({ maxResponseBytes: 1_048_576 });
    await expect(edge.call({ method: 'GET', url: `http://127.0.0.1:${bigPort}/` })).rejects.toMatchObject({
      code: 'too_large',
    });
    const started = Date.now();
    await expect(
      edge.call({ method: 'GET', url: `http://127.0.0.1:${slowPort}/`, timeout: 0.2 }),
    ).rejects.toMatchObject({ code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2000);
    await expect(edge.call({ method: 'GET', url: 'file:///etc/passwd' })).rejects.toMatchObject({ code: 'invalid' });
  });

  describe('as an action', () => {
    let h: Harness;
    afterEach(async () => {
      await h?.close();
    });
    it('a home edge posts the templated body to a local server', async () => {
      h = await harness();
      const a = await h.create({
        alias: 'relay',
        trigger: { platform: 'webhook' },
        action: [
          {
            call_url: {
              method: 'POST',
              url: `http://127.0.0.1:${port}/in/{{ trigger.json.room }}`,
              headers: { 'X-Token': 'abc' },
              body: '{"temp": {{ trigger.json.t }}, "light": "{{ states(\'light.k\') }}"}',
            },
            response_variable: 'resp',
          },
          { service: 'x.after', data: { status: '{{ resp.status }}', ok: '{{ resp.json.ok }}' } },
        ],
      });
      h.states.set('light.k', 'on');
      const before = target.received.length;
      expect(h.engine.handleWebhook(a.webhook_id!, { room: 'hall', t: 21.5 }, 'local').status).toBe(200);
      await until(() => h.services.calls.length === 1);
      expect(target.received.slice(before)).toMatchObject([
        { method: 'POST', url: '/in/hall', body: '{"temp": 21.5, "light": "on"}' },
      ]);
      expect(target.received.at(-1)!.headers['x-token']).toBe('abc');
      expect(h.services.calls[0].data).toEqual({ status: 200, ok: true });
    });
    it('a replica engine refuses private targets and records the error in the trace', async () => {
      h = await harness({ deps: { callUrl: { policy: 'public-only' } } });
      const a = await h.create({
        alias: 'ssrf',
        trigger: { platform: 'webhook' },
        action: [{ call_url: { method: 'GET', url: 'http://169.254.169.254/latest/meta-data/' } }],
      });
      h.engine.handleWebhook(a.webhook_id!, {}, 'cloud');
      await until(() => h.engine.traces(a.id)[0]?.state === 'failed');
      expect(h.engine.traces(a.id)[0].error).toContain('non-public address (169.254.169.254)');
    });
  });
});
