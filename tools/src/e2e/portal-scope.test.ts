import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { MqttClient } from 'mqtt';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import { viewOnlyMember, type Cleanups } from './support.ts';
import {
  BROWSER_SUITE,
  CHROMIUM,
  expectAccessible,
  launchBrowser,
  newPage,
  ownerWithLamp,
  portalCloud,
  shot,
  signInAt,
  unwind,
  untilMirrored,
} from './portal-support.ts';

/**
 * The cloud portal's workspace switcher (issue #15): Personal or one of the user's organizations,
 * kept in the session, sent as X-Organization-Id and in the live socket's auth; the page follows it.
 */
const LAMP = 'light.living_room_lamp';

/** The auth messages the page's sockets sent, in order. */
function authsSent(page: Page): Array<Record<string, unknown>> {
  const auths: Array<Record<string, unknown>> = [];
  page.on('websocket', (ws) =>
    ws.on('framesent', (f) => {
      const m = JSON.parse(String(f.payload)) as Record<string, unknown>;
      if (m.type === 'auth') auths.push(m);
    }),
  );
  return auths;
}

const storedOrg = (page: Page) =>
  page.evaluate(() => (JSON.parse(localStorage.getItem('smarthome.session') ?? '{}') as { org?: unknown }).org);

const dashboard = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

describe.skipIf(!CHROMIUM)(`portal workspace switcher ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let browser: Browser;
  let owner: { email: string; password: string; token: string };
  let lamp: { client: MqttClient; commands: string[] };
  let member: { email: string; password: string; token: string; id: string };
  let org: { id: string; name: string };

  beforeAll(async () => {
    cloud = await portalCloud(cleanups);
    ({ owner, lamp } = await ownerWithLamp(cloud, cleanups, 'Flat', 'lamp', 'Living room'));
    await untilMirrored(cloud, owner.token, LAMP, 'off');
    // the owner's organization "Family", the member in it, the lamp shared with it view-only
    member = await viewOnlyMember(cloud, owner.token, LAMP);
    [org] = (await cloud.get('/v1/organizations', { token: member.token })).body as Array<{ id: string; name: string }>;
    expect(org.name).toBe('Family');
    // the organization's dashboard shows the lamp; the member's own (personal) one does not. Without a
    // personal dashboard, Personal's Overview would list the lamp too: the cloud's personal scope for
    // entities is everything the user reaches, the shares of every organization included
    const shared = await cloud.put('/v1/ui-dashboard', {
      token: owner.token,
      org: org.id,
      body: {
        name: 'family',
        title: 'Family room',
        config: { views: [{ title: 'Main', cards: [{ type: 'tile', entity: LAMP }] }] },
      },
    });
    expect(shared.status).toBe(200);
    const mine = await cloud.put('/v1/ui-dashboard', {
      token: member.token,
      body: { name: 'mine', title: 'My things', config: { views: [{ title: 'Main', cards: [] }] } },
    });
    expect(mine.status).toBe(200);
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  it("a member switches to the organization's workspace and back: its dashboard, the shared lamp view-only, the socket's scope", async () => {
    const { page, problems } = await newPage(browser);
    const auths = authsSent(page);
    await signInAt(page, cloud, member.email, member.password);
    const workspace = page.getByLabel('Workspace');
    await expect.poll(() => dashboard(page)).toBe('My things');
    // Personal and each organization the member belongs to, Personal chosen
    await expect.poll(() => workspace.locator('option').allTextContents()).toEqual(['Personal', 'Family']);
    expect(await workspace.inputValue()).toBe('');
    expect(await page.locator(`[data-entity="${LAMP}"]`).count()).toBe(0);
    await expect.poll(() => auths.length).toBe(1);
    expect(auths[0]).not.toHaveProperty('organization_id');
    await expectAccessible(page, 'workspace switcher (personal)');

    // the organization: its dashboard, the lamp on it, the socket re-authenticated in its scope
    await workspace.selectOption({ label: 'Family' });
    await expect.poll(() => dashboard(page)).toBe('Family room');
    const control = page.locator(`[data-entity="${LAMP}"]`);
    await expect.poll(() => control.getByRole('switch').getAttribute('aria-checked')).toBe('false');
    await expect.poll(() => auths.length).toBe(2);
    expect(auths[1]).toEqual({ type: 'auth', access_token: expect.any(String), organization_id: org.id });
    expect(await storedOrg(page)).toBe(org.id);
    // view-only: the API refuses and the control is disabled; the lamp hears nothing
    const before = lamp.commands.length;
    await control.getByRole('switch').click();
    await expect
      .poll(() => control.getByRole('alert').textContent())
      .toBe('Not allowed (forbidden): you can view this but not control it.');
    expect(await control.getByRole('switch').isDisabled()).toBe(true);
    expect(lamp.commands.length).toBe(before);
    await expectAccessible(page, 'workspace switcher (organization)');
    await shot(page, 'cloud-workspace-organization');

    // kept across a reload (the session in localStorage)
    await page.reload();
    await expect.poll(() => dashboard(page)).toBe('Family room');
    expect(await page.getByLabel('Workspace').inputValue()).toBe(org.id);

    // back to Personal with the keyboard alone: the lamp's dashboard is gone, the socket personal again
    const sent = auths.length;
    await page.getByLabel('Workspace').focus();
    await page.keyboard.press('Home');
    await expect.poll(() => dashboard(page)).toBe('My things');
    expect(await page.locator(`[data-entity="${LAMP}"]`).count()).toBe(0);
    expect(await storedOrg(page)).toBe(null);
    await expect.poll(() => auths.length).toBe(sent + 1);
    expect(auths.at(-1)).not.toHaveProperty('organization_id');
    expect(problems).toEqual([]);
  }, 120_000);

  it('removed from the organization whose workspace is chosen: back to Personal, with a message', async () => {
    const { page, problems } = await newPage(browser);
    await signInAt(page, cloud, member.email, member.password);
    await expect.poll(() => dashboard(page)).toBe('My things');
    await page.getByLabel('Workspace').selectOption({ label: 'Family' });
    await expect.poll(() => dashboard(page)).toBe('Family room');

    const removed = await cloud.delete(`/v1/organizations/${org.id}/members/${member.id}`, { token: owner.token });
    expect(removed.status).toBeLessThan(300);
    await page.reload();
    await expect
      .poll(() => page.locator('.bar').getByRole('alert').textContent())
      .toBe(
        'The workspace you had chosen is no longer yours (you were removed from it, or it was deleted). Showing Personal.',
      );
    await expect.poll(() => dashboard(page)).toBe('My things');
    const workspace = page.getByLabel('Workspace');
    expect(await workspace.inputValue()).toBe('');
    expect(await workspace.locator('option').allTextContents()).toEqual(['Personal']);
    expect(await storedOrg(page)).toBe(null);
    await expectAccessible(page, 'workspace switcher (organization gone)');
    await shot(page, 'cloud-workspace-gone');
    expect(problems).toEqual([]);
  }, 120_000);

  it('the edge portal has no workspace switcher, and its socket no organization', async () => {
    const data = tempDir();
    cleanups.push(data.cleanup);
    const edge = await startEdge(data.dir);
    cleanups.push(() => edge.stop());
    const base = `http://127.0.0.1:${edge.ports.http}`;
    const onboarded = await fetch(`${base}/v1/local/onboarding`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'owner', password: 'porch lights' }),
    });
    expect(onboarded.status).toBe(201);
    const { access_token } = (await onboarded.json()) as { access_token: string };
    const { page, problems } = await newPage(browser);
    const auths = authsSent(page);
    await page.goto(`${base}/signin`);
    // even a session that carries an organization (as the cloud portal's would) stays out of the edge's scope
    await page.evaluate((s) => localStorage.setItem('smarthome.session', JSON.stringify(s)), {
      access_token,
      who: 'owner',
      org: org.id,
    });
    await page.goto(`${base}/`);
    await expect.poll(() => page.locator('.bar .badge').textContent()).toBe('live');
    expect(await page.getByLabel('Workspace').count()).toBe(0);
    expect(auths).toEqual([{ type: 'auth', access_token }]);
    expect(problems).toEqual([]);
  }, 120_000);
});
