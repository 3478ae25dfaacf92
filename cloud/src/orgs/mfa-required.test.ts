import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { orgFixture, sampleSnapshot } from '../testing/fixtures.ts';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

/**
 * Organizations requiring multi-factor sign-in (organizations.require_mfa), on a real cloud
 * (SQLite or PostgreSQL): who may turn it on, what a member without MFA gets on the
 * organization's scoped requests, in the unscoped view and on the HA WebSocket, and that it
 * applies at once to what is already open.
 */
let t: TestCloud;
const sockets: WebSocket[] = [];
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  for (const s of sockets) s.terminate();
  await t.stop();
});

type User = Awaited<ReturnType<TestCloud['user']>>;

/** Enrols and confirms TOTP through the API, as an authenticator app would. */
async function enableMfa(u: User): Promise<void> {
  const enrol = await t.post('/v1/account/mfa/totp', {
    token: u.token,
    headers: { 'x-account-verification': u.password },
  });
  expect(enrol.status).toBe(200);
  const code = new TOTP({ secret: Secret.fromBase32(enrol.body.secret) }).generate();
  expect((await t.post('/v1/account/mfa/totp/confirm', { token: u.token, body: { code } })).status).toBe(200);
}

async function orgWithEdge() {
  const f = await orgFixture(t);
  const { edge } = await t.cloud.services.edges.create(
    { kind: 'org', userId: f.admin.id, orgId: f.org.id, role: 'admin' },
    { name: 'Office' },
  );
  await t.cloud.services.mirror.replaceSnapshot(edge.id, sampleSnapshot({ devices: 1 }));
  return { ...f, edgeId: edge.id };
}

const requireMfa = (orgId: string, u: User, on: boolean) =>
  t.patch(`/v1/organizations/${orgId}`, { token: u.token, body: { require_mfa: on } });
/** The edges whose states the user sees (in the organization's scope with `org`). */
const stateEdges = async (u: User, org?: string) => {
  const res = await t.get('/v1/entities/states', { token: u.token, org });
  return res.status === 200 ? [...new Set(res.body.map((s: { edge_id: number }) => s.edge_id))].sort() : res.body;
};

/**
 * The HA socket (with organization_id) or the app socket (without), up to its auth answer;
 * `ask` sends one command and waits for its answer or the socket's end.
 */
async function haSocket(token: string, organizationId?: string) {
  const ws = new WebSocket(`${t.url.replace('http', 'ws')}${organizationId ? '/api/websocket' : '/v1/websocket'}`);
  sockets.push(ws);
  const messages: any[] = [];
  let wake: () => void = () => {};
  ws.on('message', (data) => {
    messages.push(JSON.parse(data.toString()));
    wake();
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const take = async (pred: (m: any) => boolean) => {
    for (;;) {
      const i = messages.findIndex(pred);
      if (i >= 0) return messages.splice(i, 1)[0];
      await new Promise<void>((r) => (wake = r));
    }
  };
  await take((m) => m.type === 'auth_required');
  ws.send(
    JSON.stringify({ type: 'auth', access_token: token, ...(organizationId && { organization_id: organizationId }) }),
  );
  const auth = await take((m) => m.type === 'auth_ok' || m.type === 'auth_invalid');
  let id = 0;
  const ask = (type: string) => {
    ws.send(JSON.stringify({ id: ++id, type }));
    const mine = id;
    return take((m) => (m.type === 'result' && m.id === mine) || m.type === 'auth_invalid');
  };
  return { auth, ask, closed };
}

describe('organizations requiring MFA', () => {
  it('is off by default and visible to members; only an admin with MFA may turn it on', async () => {
    const { admin, member, outsider, org } = await orgFixture(t);
    expect((await t.get(`/v1/organizations/${org.id}`, { token: member.token })).body.require_mfa).toBe(false);

    // a member, even one with MFA, and an outsider cannot flip it; nothing changes
    await enableMfa(member);
    for (const who of [member, outsider]) {
      const refused = await requireMfa(org.id, who, true);
      expect([refused.status, refused.body]).toEqual([403, { error: 'forbidden' }]);
    }
    // an admin without MFA would shut themselves out: 409 {message}
    const early = await requireMfa(org.id, admin, true);
    expect(early.status).toBe(409);
    expect(early.body.message).toMatch(/enable multi-factor sign-in for your own account/);
    expect((await t.sqlOne('SELECT require_mfa FROM organizations WHERE id = ?', [org.id]))?.require_mfa).toBe(0);

    await enableMfa(admin);
    const on = await requireMfa(org.id, admin, true);
    expect([on.status, on.body.require_mfa]).toEqual([200, true]);
    expect((await t.get(`/v1/organizations/${org.id}`, { token: member.token })).body.require_mfa).toBe(true);
    const listed = (await t.get('/v1/organizations', { token: member.token })).body;
    expect(listed.map((o: { require_mfa: boolean }) => o.require_mfa)).toEqual([true]);
    // a member may still not turn it off
    expect((await requireMfa(org.id, member, false)).status).toBe(403);
    expect((await requireMfa(org.id, admin, false)).body.require_mfa).toBe(false);
  });

  it('a member without MFA gets 403 mfa_enrollment_required in the scope and loses the unscoped view; with MFA, access is back at once', async () => {
    const { admin, member, org, edgeId } = await orgWithEdge();
    const { edge: home } = await t.cloud.services.edges.create(
      { kind: 'personal', userId: member.id, orgId: null },
      { name: 'Home' },
    );
    await t.cloud.services.mirror.replaceSnapshot(home.id, sampleSnapshot({ devices: 1 }));
    const both = [edgeId, home.id].sort();
    expect(await stateEdges(member, org.id)).toEqual([edgeId]);
    expect(await stateEdges(member)).toEqual(both);

    await enableMfa(admin);
    expect((await requireMfa(org.id, admin, true)).status).toBe(200);
    // scoped: a specific code on every list route that takes the header
    const scoped = t.cloud.routes.filter((r) => r.orgContext && r.method === 'get' && !r.path.includes('{'));
    expect(scoped.length).toBeGreaterThan(5);
    for (const { path } of scoped) {
      const res = await t.get(path, { token: member.token, org: org.id });
      expect([path, res.status, res.body]).toEqual([path, 403, { error: 'mfa_enrollment_required' }]);
    }
    // unscoped: the organization's edges are gone, the member's own stay
    expect(await stateEdges(member)).toEqual([home.id]);
    expect((await t.get(`/v1/devices?edge_id=${edgeId}`, { token: member.token })).body).toEqual([]);
    // the organization itself stays readable, so the member can see why
    expect((await t.get(`/v1/organizations/${org.id}`, { token: member.token })).body.require_mfa).toBe(true);
    // the admin, with MFA, is unaffected
    expect(await stateEdges(admin, org.id)).toEqual([edgeId]);

    await enableMfa(member);
    expect(await stateEdges(member, org.id)).toEqual([edgeId]);
    expect(await stateEdges(member)).toEqual(both);
  });

  it('applies at once to sessions already open; disabling MFA shuts the member out again; turning it off lets everyone back', async () => {
    const { admin, member, org, edgeId } = await orgWithEdge();
    const open = await haSocket(member.token, org.id);
    expect(open.auth.type).toBe('auth_ok');
    expect((await open.ask('get_states')).result.map((s: { entity_id: string }) => s.entity_id)).toEqual([
      'light.lamp_1',
    ]);
    const app = await haSocket(member.token);
    const appEdges = async () =>
      [...new Set((await app.ask('get_states')).result.map((s: { edge_id: number }) => s.edge_id))].sort();
    expect(await appEdges()).toEqual([edgeId]);

    await enableMfa(admin);
    expect((await requireMfa(org.id, admin, true)).status).toBe(200);
    // the open session's next command ends it, saying what to do
    const ended = await open.ask('get_states');
    expect(ended).toEqual({ type: 'auth_invalid', message: expect.stringMatching(/^mfa_enrollment_required: /) });
    expect(ended.message).toContain('POST /v1/account/mfa/totp');
    expect(await open.closed).toBe(4001);
    // the app socket (no organization scope) stays open, without the organization's edges
    expect(await appEdges()).toEqual([]);
    // a new one is refused the same way; the admin's is not
    const refused = await haSocket(member.token, org.id);
    expect(refused.auth.message).toMatch(/^mfa_enrollment_required: /);
    expect(await refused.closed).toBe(4001);
    expect((await haSocket(admin.token, org.id)).auth.type).toBe('auth_ok');

    // the admin drops their own MFA: shut out of the scope too, but may still turn the requirement off
    const pw = { 'x-account-verification': admin.password };
    const backup = (await t.post('/v1/account/mfa/backup-codes', { token: admin.token, headers: pw })).body.codes;
    const disable = await t.post('/v1/account/mfa/totp/disable', {
      token: admin.token,
      headers: pw,
      body: { code: backup[0] },
    });
    expect(disable.status).toBe(200);
    expect((await t.get('/v1/entities/states', { token: admin.token, org: org.id })).status).toBe(403);
    expect((await requireMfa(org.id, admin, false)).status).toBe(200);
    expect(await stateEdges(admin, org.id)).toEqual([edgeId]);
    expect(await stateEdges(member, org.id)).toEqual([edgeId]);
    expect((await haSocket(member.token, org.id)).auth.type).toBe('auth_ok');
    expect(await appEdges()).toEqual([edgeId]);
  });
});
