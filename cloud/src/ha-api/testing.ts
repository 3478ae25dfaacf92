import { expect } from 'vitest';
import WebSocket from 'ws';

export interface Client {
  ask(msg: Record<string, unknown>): Promise<any>;
  inbox: any[];
  closed: Promise<{ code: number; reason: string }>;
  next(pred: (m: any) => boolean): Promise<any>;
}

/** A raw HA WebSocket client: auth phase done (auth_ok expected unless `expectOk` is false). */
export async function connectHa(
  url: string,
  sockets: WebSocket[],
  token: string,
  extra: Record<string, unknown> = {},
  expectOk = true,
): Promise<Client & { auth: any }> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/api/websocket`);
  sockets.push(ws);
  const inbox: any[] = [];
  const waiters: { pred: (m: any) => boolean; resolve: (m: any) => void }[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    inbox.push(m);
    for (const w of [...waiters])
      if (w.pred(m)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const next = (pred: (m: any) => boolean) => {
    const found = inbox.find(pred);
    if (found) {
      inbox.splice(inbox.indexOf(found), 1);
      return Promise.resolve(found);
    }
    return new Promise<any>((resolve, reject) => {
      waiters.push({
        pred,
        resolve: (m) => {
          inbox.splice(inbox.indexOf(m), 1);
          resolve(m);
        },
      });
      setTimeout(() => reject(new Error(`timeout waiting; inbox ${JSON.stringify(inbox)}`)), 5000).unref();
    });
  };
  expect(await next((m) => m.type === 'auth_required')).toEqual({ type: 'auth_required', ha_version: '2026.11.0' });
  ws.send(JSON.stringify({ type: 'auth', access_token: token, ...extra }));
  const auth = await next((m) => m.type === 'auth_ok' || m.type === 'auth_invalid');
  if (expectOk) expect(auth.type).toBe('auth_ok');
  let id = 0;
  const ask = (msg: Record<string, unknown>) => {
    const mine = ++id;
    ws.send(JSON.stringify({ id: mine, ...msg }));
    return next((m) => m.id === mine && (m.type === 'result' || m.type === 'pong'));
  };
  return { ask, inbox, closed, next, auth };
}
