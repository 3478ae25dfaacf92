import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Cleanups } from './support.ts';

/** A test OAuth 2.0 provider: /authorize sends the browser straight back with a code; /token trades it once. */
export async function oauthProvider(cleanups: Cleanups): Promise<{ url: string; exchanged: string[] }> {
  const exchanged: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://provider');
    if (url.pathname === '/authorize') {
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', 'code-for-the-edge');
      back.searchParams.set('state', url.searchParams.get('state')!);
      res.writeHead(302, { location: back.toString() }).end();
      return;
    }
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const form = new URLSearchParams(raw);
      exchanged.push(form.get('code') ?? '');
      const ok = form.get('code') === 'code-for-the-edge' && form.get('client_secret') === 'shh';
      res.writeHead(ok ? 200 : 400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          ok
            ? { access_token: 'at-1', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-1' }
            : { error: 'invalid_grant' },
        ),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exchanged };
}
