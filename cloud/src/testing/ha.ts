import { expect } from 'vitest';
import WebSocket from 'ws';
import type { TestCloud } from './harness.ts';
import { addMember, makeOrg, sampleSnapshot } from './fixtures.ts';

type User = Awaited<ReturnType<TestCloud['user']>>;

/**
 * The HA API tests' world: A owns edge "House" (two sample lamps) and organization O with edge
 * "Office"; V is a member of O and may view A's lamp_2, not control it; B is another tenant.
 */
export async function haWorld(
  t: TestCloud,
): Promise<{ a: User; b: User; v: User; org: string; edgeA: number; edgeO: number }> {
  const [a, b, v] = [await t.user(), await t.user(), await t.user()];
  const org = await makeOrg(t, a);
  await addMember(t, org, v.id, 'member');
  const edgeA = (await t.post('/v1/edges', { token: a.token, body: { name: 'House' } })).body.edge.id as number;
  const edgeO = (await t.post('/v1/edges', { token: a.token, org, body: { name: 'Office' } })).body.edge.id as number;
  await t.cloud.services.mirror.replaceSnapshot(edgeA, sampleSnapshot({ devices: 2 }));
  const share = await t.post(`/v1/organizations/${org}/shares`, {
    token: a.token,
    body: { resource_type: 'entity', resource_id: 'light.lamp_2', can_view: true, user_id: v.id },
  });
  expect(share.status).toBe(201);
  return { a, b, v, org, edgeA, edgeO };
}

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
