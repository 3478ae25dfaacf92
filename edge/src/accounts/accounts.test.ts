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

describe('edge local accounts: managed by the owner', () => {
  const data = tempDir();
  let edge: Edge;
  let owner: string;
  const signIn = async (username: string, password: string) =>
    (await call(edge, 'POST', '/v1/local/auth/token', { username, password })).body.access_token as string;
  beforeAll(async () => {
    edge = await startEdge(data.dir);
    owner = (await call(edge, 'POST', '/v1/local/onboarding', { username: 'ann', password: 'ann password' })).body
      .access_token;
  }, 120_000);
  afterAll(async () => {
    await edge?.stop();
    data.cleanup();
  });

  it('an owner lists and creates accounts (never hashes); a taken name is 409, a short password 400', async () => {
    const made = await call(edge, 'POST', '/v1/local/accounts', { username: 'bob', password: 'bob password' }, owner);
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ username: 'bob', role: 'user' });
    const taken = await call(edge, 'POST', '/v1/local/accounts', { username: 'BOB', password: 'x password' }, owner);
    expect([taken.status, taken.body]).toEqual([409, { message: 'local account BOB already exists' }]);
    const short = await call(edge, 'POST', '/v1/local/accounts', { username: 'cy', password: 'short' }, owner);
    expect(short.status).toBe(400);
    expect(short.body.message).toContain('at least 8 characters');

    const list = await call(edge, 'GET', '/v1/local/accounts', undefined, owner);
    expect(list.body.map((a: { username: string; role: string }) => [a.username, a.role])).toEqual([
      ['ann', 'owner'],
      ['bob', 'user'],
    ]);
    expect(list.text).not.toContain('scrypt');
    expect((await call(edge, 'GET', '/v1/local/account', undefined, owner)).body).toMatchObject({ username: 'ann' });
  });

  it('a user account gets 403 owner_only, the cloud 403 edge_local_only; a CLI token acts as an owner but has no password', async () => {
    const bob = await signIn('bob', 'bob password');
    for (const [method, path, body] of [
      ['GET', '/v1/local/accounts', undefined],
      ['POST', '/v1/local/accounts', { username: 'mal', password: 'mal password' }],
      ['DELETE', '/v1/local/accounts/1', undefined],
    ] as const) {
      const res = await call(edge, method, path, body, bob);
      expect([method, res.status, res.body]).toEqual([method, 403, { error: 'owner_only' }]);
    }
    expect((await call(edge, 'GET', '/v1/local/account', undefined, bob)).body).toMatchObject({ role: 'user' });

    // the cloud relays calls of cloud users (shared members too): they do not manage local accounts
    const relayed = await edge.app.fetch(new Request('http://edge/v1/local/accounts'), { trusted: { via: 'cloud' } });
    expect([relayed.status, await relayed.json()]).toEqual([403, { error: 'edge_local_only' }]);

    const cli = edge.tokens.create('cli').token;
    expect((await call(edge, 'GET', '/v1/local/accounts', undefined, cli)).status).toBe(200);
    const pw = await call(
      edge,
      'POST',
      '/v1/local/account/password',
      { current_password: 'x', new_password: 'y'.repeat(8) },
      cli,
    );
    expect([pw.status, pw.body]).toEqual([403, { error: 'not_a_local_account' }]);
  });

  it("no one deletes themselves or the last owner (409); deleting ends the account's sessions", async () => {
    const me = await call(edge, 'GET', '/v1/local/account', undefined, owner);
    const self = await call(edge, 'DELETE', `/v1/local/accounts/${me.body.id}`, undefined, owner);
    expect([self.status, self.body]).toEqual([
      409,
      { message: 'you cannot delete your own account: ask another owner' },
    ]);
    const cli = edge.tokens.create('cli').token;
    const last = await call(edge, 'DELETE', `/v1/local/accounts/${me.body.id}`, undefined, cli);
    expect([last.status, last.body]).toEqual([409, { message: 'ann is the last owner: a home always keeps one' }]);
    expect((await call(edge, 'DELETE', '/v1/local/accounts/999', undefined, owner)).status).toBe(404);

    const bob = await signIn('bob', 'bob password');
    const bob2 = await signIn('bob', 'bob password');
    const bobId = (await call(edge, 'GET', '/v1/local/account', undefined, bob)).body.id;
    const gone = await call(edge, 'DELETE', `/v1/local/accounts/${bobId}`, undefined, owner);
    expect([gone.status, gone.body]).toEqual([200, { message: 'deleted local account bob' }]);
    expect((await call(edge, 'GET', '/v1/devices', undefined, bob)).status).toBe(401);
    expect((await call(edge, 'GET', '/v1/devices', undefined, bob2)).status).toBe(401);
    expect(await haSocketAuth(edge, bob)).toBe('auth_invalid');
    expect(
      (await call(edge, 'POST', '/v1/local/auth/token', { username: 'bob', password: 'bob password' })).status,
    ).toBe(401);
  });

  it('changing the password checks the current one and ends the other sessions', async () => {
    const other = await signIn('ann', 'ann password');
    const wrong = await call(
      edge,
      'POST',
      '/v1/local/account/password',
      { current_password: 'not it', new_password: 'new ann password' },
      owner,
    );
    expect([wrong.status, wrong.body]).toEqual([400, { message: 'the current password is wrong' }]);
    const ok = await call(
      edge,
      'POST',
      '/v1/local/account/password',
      { current_password: 'ann password', new_password: 'new ann password' },
      owner,
    );
    expect([ok.status, ok.body]).toEqual([200, { message: 'password changed; your other sessions were signed out' }]);
    expect((await call(edge, 'GET', '/v1/devices', undefined, owner)).status).toBe(200);
    expect((await call(edge, 'GET', '/v1/devices', undefined, other)).status).toBe(401);
    expect(
      (await call(edge, 'POST', '/v1/local/auth/token', { username: 'ann', password: 'ann password' })).status,
    ).toBe(401);
    expect(await signIn('ann', 'new ann password')).toMatch(/^sht_/);
  });
});
