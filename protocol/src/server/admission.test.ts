import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionAdmission, type AdmissionLimits } from './admission.ts';
import { UpgradeDispatcher, rejectUpgrade } from './upgrade.ts';

const servers: http.Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0))
    await new Promise<void>((r) => {
      s.closeAllConnections();
      s.close(() => r());
    });
});

const log = { error: () => {} };

/** A server answering {path} to every request, its connections admitted by `admission`. */
async function serve(limits: Partial<AdmissionLimits>, upgrade?: (d: UpgradeDispatcher) => void) {
  const admission = new ConnectionAdmission(limits);
  const dispatcher = new UpgradeDispatcher(log, admission);
  upgrade?.(dispatcher);
  const server = http.createServer(dispatcher.serverOptions(), (req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url }));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  admission.attach(server);
  dispatcher.attach(server);
  return { admission, server, port: (server.address() as AddressInfo).port };
}

/** A raw connection; `request(path)` sends a keep-alive GET and resolves with the answer's body. */
async function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => {});
  await new Promise<void>((r) => socket.once('connect', () => r()));
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString()));
  const answered = (marker: string) =>
    new Promise<string>((resolve) => {
      const check = () => {
        const at = received.indexOf(marker);
        if (at < 0) return;
        socket.off('data', check);
        resolve(received);
      };
      socket.on('data', check);
      check();
    });
  return {
    socket,
    send: (text: string) => socket.write(text),
    received: () => received,
    request(path: string) {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      return answered(`{"path":"${path}"}`);
    },
    answered,
  };
}

/** Resolves once `cond` holds (checked every 5 ms), failing after 2 s. */
async function until(cond: () => boolean): Promise<void> {
  const end = Date.now() + 2000;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in 2 s');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const UPGRADE =
  'HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';

/** A server whose /ws upgrades answer 101, then wait for `open(n)` (the tunnel's hello) before they settle. */
async function serveUpgrades(limits: Partial<AdmissionLimits>) {
  const openers: (() => void)[] = [];
  const served = await serve(limits, (d) =>
    d.register('/ws', async (_req, socket) => {
      // read, so a client's close is seen and the server can close
      socket.on('end', () => socket.destroy()).resume();
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      await new Promise<void>((r) => openers.push(r));
      socket.write('opened');
    }),
  );
  return { ...served, open: (n: number) => openers[n]() };
}

/** An upgrade opening (answered 101, its handler not settled) and a second one waiting behind it. */
async function openingAndWaiting(port: number, admission: ConnectionAdmission) {
  const first = await connect(port);
  first.send(`GET /ws ${UPGRADE}`);
  await first.answered('101 Switching Protocols');
  const second = await connect(port);
  second.send(`GET /ws ${UPGRADE}`);
  await until(() => admission.queued === 1);
  return { first, second };
}

describe('ConnectionAdmission', () => {
  it('hands over no more than maxOpening upgrades at once; plain requests never wait', async () => {
    const { admission, port, open } = await serveUpgrades({ maxOpening: 1, holdMs: 60_000 });
    const { first, second } = await openingAndWaiting(port, admission);
    // a health check on a new connection is answered while the upgrade waits
    const plain = await connect(port);
    expect(await plain.request('/healthz')).toContain('{"path":"/healthz"}');
    expect([admission.queued, admission.openingCount]).toEqual([1, 1]);
    await new Promise((r) => setTimeout(r, 100));
    expect(second.received()).toBe('');
    // the first has opened (its handler settled): the second is handed over
    open(0);
    await first.answered('opened');
    await second.answered('101 Switching Protocols');
    expect([admission.queued, admission.openingCount]).toEqual([0, 1]);
    open(1);
    await second.answered('opened');
    await until(() => admission.openingCount === 0);
  });

  it('reads and hands over perTurn connections a turn, the rest in the turns after', async () => {
    const { admission, port, open } = await serveUpgrades({ maxOpening: 10, perTurn: 1, holdMs: 60_000 });
    const clients = await Promise.all(Array.from({ length: 6 }, () => connect(port)));
    clients.forEach((c, i) => c.send(i % 2 ? `GET /ws ${UPGRADE}` : `GET /p${i} HTTP/1.1\r\nHost: x\r\n\r\n`));
    const answers = await Promise.all(clients.map((c, i) => c.answered(i % 2 ? '101 Switching' : `{"path":"/p${i}"}`)));
    expect(answers.every((a) => a.startsWith('HTTP/1.1 '))).toBe(true);
    expect(admission.openingCount).toBe(3);
    for (let n = 0; n < 3; n++) open(n);
    await until(() => admission.openingCount === 0);
  });

  it('an upgrade stops counting when it closes, or after holdMs', async () => {
    const { admission, port } = await serveUpgrades({ maxOpening: 1, holdMs: 400 });
    const { first, second } = await openingAndWaiting(port, admission);
    first.socket.destroy();
    await second.answered('101 Switching Protocols');
    const third = await connect(port);
    third.send(`GET /ws ${UPGRADE}`);
    await until(() => admission.queued === 1);
    // the second never opens: after holdMs it stops counting
    await third.answered('101 Switching Protocols');
    expect(admission.queued).toBe(0);
  });

  it('a rejected or unclaimed upgrade opens the connection at once', async () => {
    const { admission, port } = await serve({ maxOpening: 1, holdMs: 60_000 }, (d) =>
      d.register('/ws', (_req, socket) => rejectUpgrade(socket, 401, { error: 'unauthorized' })),
    );
    // a WebSocket upgrade on a path nobody claims, and an h2c upgrade, are served as plain requests
    for (const path of ['/ws', '/elsewhere']) {
      const refused = await connect(port);
      refused.send(`GET ${path} ${UPGRADE}`);
      expect(await refused.answered('}')).toMatch(path === '/ws' ? /^HTTP\/1\.1 401/ : /^HTTP\/1\.1 200/);
    }
    const h2c = await connect(port);
    h2c.send(
      'GET /h2c HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n',
    );
    expect(await h2c.answered('}')).toMatch(/^HTTP\/1\.1 200/);
    expect([admission.queued, admission.openingCount]).toEqual([0, 0]);
  });

  it('parses a request whose first chunk is only part of it; closes a connection silent for silentMs', async () => {
    const { port } = await serve({ maxOpening: 1, silentMs: 400 });
    const split = await connect(port);
    split.send('GET /spl');
    await new Promise((r) => setTimeout(r, 50));
    split.send('it HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await split.answered('{"path":"/split"}')).toMatch(/^HTTP\/1\.1 200/);
    const late = await connect(port);
    const silent = await connect(port);
    const silentClosed = new Promise<void>((r) => silent.socket.once('close', () => r()));
    await new Promise((r) => setTimeout(r, 200));
    expect(await late.request('/late')).toContain('{"path":"/late"}');
    await silentClosed;
    expect(silent.received()).toBe('');
  });

  it('forgets connections that close before they are handed over (a TCP health check)', async () => {
    const { admission, port } = await serve({ maxOpening: 1, holdMs: 60_000 });
    for (let i = 0; i < 3; i++) (await connect(port)).socket.end();
    await until(() => admission.unreadCount === 0);
    const plain = await connect(port);
    expect(await plain.request('/after')).toContain('{"path":"/after"}');
    expect(admission.unreadCount).toBe(0);
  });

  it('detach drops the upgrades still waiting, so a closing server is not held open by them', async () => {
    const { admission, server, port } = await serveUpgrades({ maxOpening: 1, holdMs: 60_000 });
    const { first, second: waiting } = await openingAndWaiting(port, admission);
    const waitingClosed = new Promise<void>((r) => waiting.socket.once('close', () => r()));
    const closed = new Promise<void>((r) => server.close(() => r()));
    admission.detach();
    await waitingClosed;
    first.socket.destroy();
    await closed;
    expect(admission.queued).toBe(0);
    servers.splice(servers.indexOf(server), 1);
  });
});
