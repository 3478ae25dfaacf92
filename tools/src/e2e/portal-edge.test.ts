import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { MqttClient } from 'mqtt';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
import type { Edge } from '@smarthome/edge/edge';
import { until, type Cleanups } from './support.ts';
import {
  BROWSER_SUITE,
  CHROMIUM,
  expectAccessible,
  launchBrowser,
  newPage,
  ownerWithLamp,
  portalCloud,
  shot,
  unwind,
} from './portal-support.ts';

/** The portal an edge serves, with its cloud stopped: first-run onboarding, local sign-in, live control. */
const LAMP = 'light.porch_lamp';

describe.skipIf(!CHROMIUM)(`portal on an edge with the cloud stopped ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let edge: Edge;
  let browser: Browser;
  let lamp: { client: MqttClient; commands: string[] };
  let base: string;

  beforeAll(async () => {
    cloud = await portalCloud(cleanups);
    ({ edge, lamp } = await ownerWithLamp(cloud, cleanups, 'Holiday home', 'lamp', 'Porch'));
    await until(() => edge.states.get(LAMP)?.state === 'off', 10_000, 'the lamp');
    // the internet is unplugged: the cloud is gone, the edge keeps serving the home
    await cloud.stop();
    await until(() => !edge.link?.connected, 10_000, 'the tunnel down');
    base = `http://127.0.0.1:${edge.ports.http}`;
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  it('first run creates the owner account, then the lamp is controlled live over the local API', async () => {
    const { page, problems } = await newPage(browser, { mobile: true });
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Welcome to your home' }).waitFor();
    await expectAccessible(page, 'edge onboarding');
    await shot(page, 'edge-onboarding');
    await page.getByLabel('Username').fill('owner');
    await page.getByLabel('Password', { exact: true }).fill('porch lights');
    await page.getByLabel('Repeat the password').fill('porch lightz');
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('The two passwords differ.');
    await page.getByLabel('Repeat the password').fill('porch lights');
    await page.getByRole('button', { name: 'Create owner account' }).click();

    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const control = page.locator(`[data-entity="${LAMP}"]`);
    const toggle = control.getByRole('switch');
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('false');
    await expect.poll(() => page.locator('.bar .badge').textContent()).toBe('live');
    await toggle.click();
    await until(() => lamp.commands.includes('lamp/set ON'), 10_000, 'the MQTT command');
    await lamp.client.publishAsync('lamp/state', 'ON', { qos: 1 });
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('true');
    await shot(page, 'edge-dashboard-mobile');
    await expectAccessible(page, 'edge dashboard');

    await page.getByRole('link', { name: 'Devices' }).click();
    await page.getByRole('link', { name: 'Porch' }).click();
    await page.getByRole('heading', { name: 'Porch' }).waitFor();
    await expect
      .poll(() => page.locator(`[data-entity="${LAMP}"] [role="switch"]`).getAttribute('aria-checked'))
      .toBe('true');
    await shot(page, 'edge-device');
    expect(problems).toEqual([]);
  }, 120_000);

  it('local sign-out ends the session; signing in again works offline; onboarding is over', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Username').fill('owner');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('invalid_credentials');
    await expectAccessible(page, 'edge sign-in');
    await shot(page, 'edge-sign-in');
    await page.getByLabel('Password').fill('porch lights');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const token = await page.evaluate(
      () =>
        (JSON.parse(localStorage.getItem('smarthome.session') ?? '{}') as { access_token?: string }).access_token ?? '',
    );
    expect(token).toMatch(/^sht_/);
    const states = () =>
      fetch(`${base}/v1/entities/states`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    expect(await states()).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await states()).toBe(401);
    expect(edge.link?.connected).toBe(false);
    expect(problems).toEqual([]);
  }, 120_000);

  it('the dashboard editor saves on the edge itself: a card added offline is there after a reload', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(`${base}/`);
    await page.getByLabel('Username').fill('owner');
    await page.getByLabel('Password').fill('porch lights');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('button', { name: 'Edit dashboard' }).click();
    const editor = page.getByRole('region', { name: 'Edit dashboard' });
    await editor.getByLabel('Card type').selectOption('tile');
    await editor.getByLabel('Entity').selectOption(LAMP);
    await editor.getByRole('button', { name: 'Add card' }).click();
    await expectAccessible(page, 'edge dashboard editor');
    await shot(page, 'edge-dashboard-edit');
    await editor.getByRole('button', { name: 'Save dashboard' }).click();
    await editor.waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    // still no cloud: the edge stored it
    expect(edge.link?.connected).toBe(false);
    await page.reload();
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    await expect.poll(() => page.locator(`[data-entity="${LAMP}"] [role="switch"]`).count()).toBe(1);
    await shot(page, 'edge-dashboard-stored');
    const token = await page.evaluate(
      () =>
        (JSON.parse(localStorage.getItem('smarthome.session') ?? '{}') as { access_token?: string }).access_token ?? '',
    );
    const stored = (await (
      await fetch(`${base}/v1/ui-dashboard`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { name: string; config: { views: { cards: unknown[] }[] } }[];
    expect(stored.map((d) => d.name)).toEqual(['home']);
    expect(stored[0].config.views[0].cards).toEqual([{ type: 'tile', entity: LAMP }]);
    expect(problems).toEqual([]);
  }, 120_000);
});
