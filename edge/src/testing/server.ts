/** Test helper: a Hono app with the shared error handling and a SpecRouter, served on loopback. */
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { serve, type ServerType } from '@hono/node-server';
import { installErrorHandling, SpecRouter, type ErrorLogger } from '@smarthome/protocol/server';

export interface TestServer {
  url: string;
  close(): Promise<void>;
  json(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

export async function serveRoutes<A>(
  principal: A,
  mount: (router: SpecRouter<A>) => void,
  log: ErrorLogger = { error: () => {} },
): Promise<TestServer> {
  const app = new Hono();
  installErrorHandling(app, log);
  const router = new SpecRouter<A>(app, { authenticate: async () => principal });
  mount(router);
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }),
    async json(method, path, body) {
      const res = await fetch(url + path, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}
