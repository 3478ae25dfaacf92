import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

export interface TokenRequest {
  method: string;
  contentType: string | undefined;
  form: Record<string, string>;
}

/**
 * A tiny OAuth token endpoint for the tests of one file (started before them, closed after):
 * every request, its form parsed, goes to `onRequest`, which answers it. `url()` once started.
 */
export function tokenEndpoint(onRequest: (req: TokenRequest, res: ServerResponse) => void): { url: () => string } {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (c) => {
        raw += c;
      });
      req.on('end', () => {
        onRequest(
          {
            method: req.method!,
            contentType: req.headers['content-type'],
            form: Object.fromEntries(new URLSearchParams(raw)),
          },
          res,
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { url: () => url };
}

export const sendJson = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
