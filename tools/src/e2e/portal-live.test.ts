import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page, WebSocket as PageSocket } from 'playwright-core';
import type { MqttClient } from 'mqtt';
import { ensurePortalBuilt } from '@smarthome/web/serve/build';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import type { Edge } from '@smarthome/edge/edge';
import { mqttLamp, pairEdge, until, type Cleanups } from './support.ts';
import { BROWSER_SUITE, CHROMIUM, launch, newPage } from './portal-support.ts';

/**
 * The portal's live states are home-assistant-js-websocket speaking Home Assistant's API on
 * `/api/websocket`, on the cloud and on the edge: what the browser's socket sends and where it goes,
 * the organization scope in the auth message, and the cloud's refresh flow for an expired token.
 */
const FLAT = 'light.flat_lamp';
const OFFICE = 'light.office_desk';

interface Watched {
  sockets: PageSocket[];
  /** every frame the page sent, parsed, in order */
  sent: Array<Record<string, unknown>>;
}

function watch(page: Page): Watched {
  const w: Watched = { sockets: [], sent: [] };
  page.on('websocket', (ws) => {
    w.sockets.push(ws);
    ws.on('framesent', (f) => w.sent.push(JSON.parse(String(f.payload)) as Record<string, unknown>));
  });
  return w;
}

/** Opens the portal at base signed in as `session` (what the sign-in form stores). */
async function openSignedIn(page: Page, base: string, session: Record<string, unknown>): Promise<void> {
  await page.goto(`${base}/signin`);
  await page.evaluate((s) => localStorage.setItem('smarthome.session', JSON.stringify(s)), session);
  await page.goto(`${base}/`);
}

/**
 * Holds the page's API calls (not the token refresh) until its socket sent an auth: their 401s
 * would refresh the token first, and the socket's own refresh would go untested.
 */
async function holdApiUntilSocketAuth(page: Page, w: Watched): Promise<void> {
  await page.route(/\/v1\//, async (route) => {
    if (!new URL(route.request().url()).pathname.startsWith('/v1/auth/token'))
      await until(() => w.sent.some((m) => m.type === 'auth'), 10_000, 'the socket auth');
    await route.continue();
  });
}

const storedToken = (page: Page) =>
  page.evaluate(
    () => (JSON.parse(localStorage.getItem('smarthome.session') ?? '{}') as { access_token?: string }).access_token,
  );

const switchOf = (page: Page, id: string) => page.locator(`[data-entity="${id}"] [role="switch"]`);

describe.skipIf(!CHROMIUM)(`portal live states through home-assistant-js-websocket ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let browser: Browser;
  let owner: { email: string; password: string; token: string; refresh: string };
  let orgId: string;
  let flat: { client: MqttClient; commands: string[] };
  let localEdge: Edge;
  let localToken: string;
  let localLamp: { client: MqttClient; commands: string[] };

  beforeAll(async () => {
    await ensurePortalBuilt();
    cloud = await startTestCloud();
    cleanups.push(() => cloud.stop());
    owner = await cloud.user();
    const { edge } = await pairEdge(cloud, cleanups, owner.token, 'Flat');
    flat = await mqttLamp(edge, cleanups, 'lamp', 'Flat');
    orgId = (await cloud.post('/v1/organizations', { token: owner.token, body: { name: 'Office' } })).body.id;
    const { edge: office } = await pairEdge(cloud, cleanups, owner.token, 'Office', orgId);
    await mqttLamp(office, cleanups, 'desk', 'Office');
    for (const id of [FLAT, OFFICE])
      await until(
        async () => (await cloud.get(`/v1/entities/states/${id}`, { token: owner.token })).body?.state === 'off',
        10_000,
        `the mirrored ${id}`,
      );
    // an edge on its own, signed in locally
    const data = tempDir();
    cleanups.push(data.cleanup);
    localEdge = await startEdge(data.dir);
    cleanups.push(() => localEdge.stop());
    localLamp = await mqttLamp(localEdge, cleanups, 'lamp', 'Flat');
    await until(() => localEdge.states.get(FLAT)?.state === 'off', 10_000, 'the local lamp');
    const onboarded = await fetch(`http://127.0.0.1:${localEdge.ports.http}/v1/local/onboarding`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'owner', password: 'porch lights' }),
    });
    expect(onboarded.status).toBe(201);
    localToken = ((await onboarded.json()) as { access_token: string }).access_token;
    browser = await launch();
    cleanups.push(() => browser.close());
  }, 180_000);
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
  });

  it('cloud: one socket to /api/websocket, HA auth then subscribe_entities; diffs reach the page; sign-out closes it', async () => {
    const { page, problems } = await newPage(browser);
    const w = watch(page);
    await openSignedIn(page, cloud.url, { access_token: owner.token, who: owner.email, org: null });
    await expect.poll(() => page.locator('.bar .badge').textContent()).toBe('live');
    await expect.poll(() => switchOf(page, FLAT).getAttribute('aria-checked')).toBe('false');
    // without a scope: every edge the user reaches, its organization's too
    await expect.poll(() => switchOf(page, OFFICE).count()).toBe(1);

    expect(w.sockets.map((s) => new URL(s.url()).pathname)).toEqual(['/api/websocket']);
    // the library's messages: auth (no organization_id), supported_features as id 1, then its entity collection
    expect(w.sent.slice(0, 3)).toEqual([
      { type: 'auth', access_token: owner.token },
      { id: 1, type: 'supported_features', features: { coalesce_messages: 1 } },
      { id: expect.any(Number), type: 'subscribe_entities' },
    ]);
    expect(w.sent.some((m) => m.type === 'get_states' || m.type === 'subscribe_events')).toBe(false);

    // a change arrives as a compressed diff the library applies
    await flat.client.publishAsync('lamp/state', 'ON', { qos: 1 });
    await expect.poll(() => switchOf(page, FLAT).getAttribute('aria-checked')).toBe('true');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await until(() => w.sockets[0].isClosed(), 10_000, 'the socket closed');
    expect(w.sockets).toHaveLength(1);
    expect(problems).toEqual([]);
  }, 120_000);

  it("cloud: the portal's organization scope goes in the auth message; only that organization's edge is shown", async () => {
    const signedIn = await cloud.post('/v1/auth/token', {
      body: { grant_type: 'password', email: owner.email, password: owner.password },
    });
    expect(signedIn.status).toBe(200);
    const { page, problems } = await newPage(browser);
    const w = watch(page);
    await openSignedIn(page, cloud.url, { access_token: signedIn.body.access_token, who: owner.email, org: orgId });
    await expect.poll(() => switchOf(page, OFFICE).getAttribute('aria-checked')).toBe('false');
    expect(w.sent[0]).toEqual({ type: 'auth', access_token: signedIn.body.access_token, organization_id: orgId });
    expect(await switchOf(page, FLAT).count()).toBe(0);
    expect(problems).toEqual([]);
  }, 120_000);

  it('cloud: an expired access token is refreshed through the portal’s refresh flow before the socket’s auth', async () => {
    const signedIn = await cloud.post('/v1/auth/token', {
      body: { grant_type: 'password', email: owner.email, password: owner.password },
    });
    // a token whose exp has passed (the server would refuse it: the client must not send it)
    const expired = `e30.${Buffer.from(JSON.stringify({ exp: 1 })).toString('base64url')}.x`;
    const { page, problems } = await newPage(browser);
    const w = watch(page);
    const refreshes: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/auth/token') refreshes.push(r.postData() ?? '');
    });
    await holdApiUntilSocketAuth(page, w);
    await openSignedIn(page, cloud.url, {
      access_token: expired,
      refresh_token: signedIn.body.refresh_token,
      who: owner.email,
      org: null,
    });
    await expect.poll(() => page.locator('.bar .badge').textContent()).toBe('live');
    // one auth, with the token the socket's refresh stored (the page's calls were held until then)
    const auths = w.sent.filter((m) => m.type === 'auth');
    expect(auths).toHaveLength(1);
    expect(auths[0].access_token).not.toBe(expired);
    expect(auths[0].access_token).toBe(await storedToken(page));
    // the page's own calls wait for the same refresh instead of sending the expired token and
    // rotating the refresh token a second time
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(refreshes.map((b) => (JSON.parse(b) as { grant_type: string }).grant_type)).toEqual(['refresh_token']);
    expect(problems).toEqual([]);
  }, 120_000);

  it('cloud: a token the server refuses (auth_invalid) is refreshed once and the socket tries again', async () => {
    const signedIn = await cloud.post('/v1/auth/token', {
      body: { grant_type: 'password', email: owner.email, password: owner.password },
    });
    const { page, problems } = await newPage(browser);
    const w = watch(page);
    await holdApiUntilSocketAuth(page, w);
    await openSignedIn(page, cloud.url, {
      access_token: 'not-a-token',
      refresh_token: signedIn.body.refresh_token,
      who: owner.email,
      org: null,
    });
    await expect.poll(() => page.locator('.bar .badge').textContent()).toBe('live');
    const auths = w.sent.filter((m) => m.type === 'auth').map((m) => m.access_token);
    expect(auths).toHaveLength(2);
    expect(auths[0]).toBe('not-a-token');
    expect(auths[1]).not.toBe('not-a-token');
    expect(w.sockets).toHaveLength(2);
    expect(problems).toEqual([]);
  }, 120_000);

  it("edge: the local session token on the edge's /api/websocket, subscribe_entities, live control", async () => {
    const base = `http://127.0.0.1:${localEdge.ports.http}`;
    const { page, problems } = await newPage(browser);
    const w = watch(page);
    await openSignedIn(page, base, { access_token: localToken, who: 'owner', org: null });
    await expect.poll(() => page.locator('.bar .badge').textContent()).toBe('live');
    await expect.poll(() => switchOf(page, FLAT).getAttribute('aria-checked')).toBe('false');
    expect(w.sockets.map((s) => new URL(s.url()).pathname)).toEqual(['/api/websocket']);
    expect(w.sent.slice(0, 3)).toEqual([
      { type: 'auth', access_token: localToken },
      { id: 1, type: 'supported_features', features: { coalesce_messages: 1 } },
      { id: expect.any(Number), type: 'subscribe_entities' },
    ]);
    await switchOf(page, FLAT).click();
    await until(() => localLamp.commands.includes('lamp/set ON'), 10_000, 'the MQTT command');
    await localLamp.client.publishAsync('lamp/state', 'ON', { qos: 1 });
    await expect.poll(() => switchOf(page, FLAT).getAttribute('aria-checked')).toBe('true');
    expect(problems).toEqual([]);
  }, 120_000);
});

describe.skipIf(!CHROMIUM)(`portal live states when the access token expires ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let browser: Browser;

  beforeAll(async () => {
    await ensurePortalBuilt();
    // access tokens of 2 s: the server ends the socket's session at expiry (auth_invalid, 4001)
    cloud = await startTestCloud({ accessTokenTtlSeconds: 2 });
    cleanups.push(() => cloud.stop());
    browser = await launch();
    cleanups.push(() => browser.close());
  }, 120_000);
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
  });

  it('the library reconnects and the socket authenticates again with a refreshed token', async () => {
    const user = await cloud.user();
    const { page, problems } = await newPage(browser);
    const w = watch(page);
    await openSignedIn(page, cloud.url, {
      access_token: user.token,
      refresh_token: user.refresh,
      who: user.email,
      org: null,
    });
    await expect.poll(() => page.locator('.bar .badge').textContent()).toBe('live');
    await until(() => w.sockets.length >= 2 && w.sockets[0].isClosed(), 20_000, 'a second socket after expiry');
    await expect.poll(() => page.locator('.bar .badge').textContent()).toBe('live');
    const tokens = w.sent.filter((m) => m.type === 'auth').map((m) => m.access_token);
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(w.sent.filter((m) => m.type === 'subscribe_entities').length).toBeGreaterThanOrEqual(2);
    expect(problems).toEqual([]);
  }, 120_000);
});
