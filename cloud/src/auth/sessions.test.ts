import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

const signIn = async (email: string, password: string, ua: string) => {
  const res = await t.post('/v1/auth/token', {
    body: { grant_type: 'password', email, password },
    headers: { 'user-agent': ua },
  });
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string };
};

describe('sign-in sessions', () => {
  it('lists refresh-token families with device and last use, and revokes one (its tokens die at once)', async () => {
    const u = await t.user();
    const phone = await signIn(u.email, u.password, 'Phone/1.0');
    const laptop = await signIn(u.email, u.password, 'Laptop/2.0');
    await new Promise((r) => setTimeout(r, 5));
    const refreshed = await t.post('/v1/auth/token', {
      body: { grant_type: 'refresh_token', refresh_token: phone.refresh_token },
      headers: { 'user-agent': 'Phone/1.1' },
    });
    expect(refreshed.status).toBe(200);

    const list = await t.get('/v1/account/sessions', { token: laptop.access_token });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(3); // registration, phone, laptop
    const [first] = list.body;
    expect(first).toEqual({
      id: expect.any(String),
      user_agent: 'Phone/1.1',
      client_address: expect.any(String),
      created_at: expect.any(String),
      last_used_at: expect.any(String),
      current: false,
    });
    expect(Date.parse(first.last_used_at)).toBeGreaterThan(Date.parse(first.created_at));
    const mine = list.body.filter((s: { current: boolean }) => s.current);
    expect(mine.map((s: { user_agent: string }) => s.user_agent)).toEqual(['Laptop/2.0']);

    // another user cannot see or revoke it
    const other = await t.user();
    expect(
      (await t.get('/v1/account/sessions', { token: other.token })).body.map((s: { id: string }) => s.id),
    ).not.toContain(first.id);
    const foreign = await t.delete(`/v1/account/sessions/${first.id}`, { token: other.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ message: 'session not found' });
    expect((await t.get('/v1/account', { token: refreshed.body.access_token })).status).toBe(200);

    expect((await t.delete(`/v1/account/sessions/${first.id}`, { token: laptop.access_token })).status).toBe(200);
    expect((await t.get('/v1/account', { token: refreshed.body.access_token })).status).toBe(401);
    expect(
      (
        await t.post('/v1/auth/token', {
          body: { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token },
        })
      ).status,
    ).toBe(401);
    expect((await t.delete(`/v1/account/sessions/${first.id}`, { token: laptop.access_token })).status).toBe(404);
  });

  it("revokes all but the caller's own", async () => {
    const u = await t.user();
    const a = await signIn(u.email, u.password, 'A');
    const b = await signIn(u.email, u.password, 'B');
    const res = await t.delete('/v1/account/sessions', { token: b.access_token });
    expect(res.body).toEqual({ message: '2 session(s) revoked' });
    expect((await t.get('/v1/account', { token: a.access_token })).status).toBe(401);
    expect((await t.get('/v1/account', { token: u.token })).status).toBe(401);
    expect(
      (await t.get('/v1/account/sessions', { token: b.access_token })).body.map(
        (s: { user_agent: string; current: boolean }) => [s.user_agent, s.current],
      ),
    ).toEqual([['B', true]]);
  });
});
