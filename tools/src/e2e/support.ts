import net from 'node:net';

/** Shared by the end-to-end tests (not a test file). */

/** Polls until fn returns something truthy (sync or async), or throws after ms. */
export async function until<T>(fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 10_000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The load balancer's stand-in: each connection goes to the first target that accepts it. */
export async function failoverProxy(targets: () => number[]): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    const attempt = (ports: number[]) => {
      if (ports.length === 0) { client.destroy(); return; }
      const upstream = net.connect({ host: '127.0.0.1', port: ports[0] });
      upstream.once('error', () => { upstream.destroy(); attempt(ports.slice(1)); });
      upstream.once('connect', () => {
        sockets.add(upstream);
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        upstream.on('close', () => { sockets.delete(upstream); client.destroy(); });
        client.on('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    attempt(targets());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
}
