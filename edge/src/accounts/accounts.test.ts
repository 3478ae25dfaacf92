import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ensurePortalBuilt } from '@smarthome/web/serve/build';
import type { Edge } from '../edge.ts';
import { startEdge, tempDir } from '../testing/edge.ts';
import { createAccountCommand } from './cli.ts';
import { SignInThrottle } from './throttle.ts';

async function call(edge: Edge, method: string, path: string, body?: unknown, token?: string) {
  const res = await fetch(`http://127.0.0.1:${edge.ports.http}${path}`, {
    method,
    headers: {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : undefined,
  };
}

/** auth over the edge's Home Assistant WebSocket: the answer's type. */
function haSocketAuth(edge: Edge, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${edge.ports.http}/api/websocket`);
    ws.on('error', reject);
    ws.on('message', (d) => {
      const msg = JSON.parse(String(d)) as { type: string };
      if (msg.type === 'auth_required') ws.send(JSON.stringify({ type: 'auth', access_token: token }));
      else {
        ws.close();
        resolve(msg.type);
      }
    });
  });
}

describe('edge local accounts: onboarding, sign-in, sessions', () => {
  const data = tempDir();
  let edge: Edge;
  beforeAll(async () => {
    await ensurePortalBuilt();
    edge = await startEdge(data.dir);
  }, 120_000);
  afterAll(async () => {
    await edge?.stop();
    data.cleanup();
  });

  it('first run: the portal page, onboarding creates the owner once and signs it in', async () => {
    const page = await call(edge, 'GET', '/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<meta name="smarthome-portal" content="edge">');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");

    expect((await call(edge, 'GET', '/v1/local/onboarding')).body).toEqual({ onboarded: false });
    const short = await call(edge, 'POST', '/v1/local/onboarding', { username: 'ann', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.message).toContain('at least 8 characters');

    const made = await call(edge, 'POST', '/v1/local/onboarding', { username: 'ann', password: 'correct horse' });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ token_type: 'Bearer', account: { username: 'ann', role: 'owner' } });
    expect(made.body.access_token).toMatch(/^sht_/);
    expect((await call(edge, 'GET', '/v1/local/onboarding')).body).toEqual({ onboarded: true });

    // the session is a bearer for the local API and the Home Assistant WebSocket
    expect((await call(edge, 'GET', '/v1/entities/states', undefined, made.body.access_token)).status).toBe(200);
    expect(await haSocketAuth(edge, made.body.access_token)).toBe('auth_ok');

    const again = await call(edge, 'POST', '/v1/local/onboarding', { username: 'eve', password: 'correct horse' });
    expect(again.status).toBe(409);
    expect(again.body.message).toBe('this home already has an owner: sign in instead');
  });

  it('sign-in issues a session; sign-out ends it, not other local tokens', async () => {
    const wrong = await call(edge, 'POST', '/v1/local/auth/token', { username: 'ann', password: 'wrong password' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'invalid_credentials' });
    const unknown = await call(edge, 'POST', '/v1/local/auth/token', { username: 'nobody', password: 'whatever1' });
    expect(unknown.status).toBe(401);

    const ok = await call(edge, 'POST', '/v1/local/auth/token', { username: 'ANN', password: 'correct horse' });
    expect(ok.status).toBe(200);
    const token = ok.body.access_token as string;
    expect((await call(edge, 'GET', '/v1/devices', undefined, token)).status).toBe(200);
    expect((await call(edge, 'POST', '/v1/local/auth/logout', undefined, token)).body).toEqual({
      message: 'signed out',
    });
    expect((await call(edge, 'GET', '/v1/devices', undefined, token)).status).toBe(401);
    expect(await haSocketAuth(edge, token)).toBe('auth_invalid');

    const cli = edge.tokens.create('cli').token;
    await call(edge, 'POST', '/v1/local/auth/logout', undefined, cli);
    expect((await call(edge, 'GET', '/v1/devices', undefined, cli)).status).toBe(200);
  });

  it('password guessing is slowed: 429 with Retry-After after 5 failures', async () => {
    let last = { status: 0, headers: new Headers(), body: undefined as any };
    for (let i = 0; i < 6; i++)
      last = await call(edge, 'POST', '/v1/local/auth/token', { username: 'guessme', password: `guess-${i}` });
    expect(last.status).toBe(429);
    expect(last.body).toEqual({ error: 'rate_limited' });
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('`pnpm edge account create` adds an account that signs in (password from stdin)', async () => {
    const lines: string[] = [];
    const out = { stdout: (t: string) => lines.push(t), stderr: (t: string) => lines.push(t) };
    expect(await createAccountCommand(data.dir, 'bob', 'user', Readable.from(['bob password\n']), out)).toBe(0);
    expect(lines.join('')).toContain('created local account "bob" (user;');
    expect(await createAccountCommand(data.dir, 'bob', 'user', Readable.from(['bob password\n']), out)).toBe(1);
    expect(lines.join('')).toContain('local account bob already exists');
    expect(await createAccountCommand(data.dir, 'carl', 'user', Readable.from(['short\n']), out)).toBe(1);
    const signedIn = await call(edge, 'POST', '/v1/local/auth/token', { username: 'bob', password: 'bob password' });
    expect(signedIn.body.account).toMatchObject({ username: 'bob', role: 'user' });
  });
});

describe('SignInThrottle', () => {
  it('doubles the wait after the free failures and forgets after success', () => {
    let now = 0;
    const t = new SignInThrottle(() => now);
    for (let i = 0; i < 5; i++) t.fail('k');
    expect(t.waitFor('k')).toBe(1);
    t.fail('k');
    expect(t.waitFor('k')).toBe(2);
    now += 2000;
    expect(t.waitFor('k')).toBe(0);
    t.succeed('k');
    t.fail('k');
    expect(t.waitFor('k')).toBe(0);
  });
});
