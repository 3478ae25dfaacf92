import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
import type { Edge } from '@smarthome/edge/edge';
import { Simulator } from '../sim/simulator.ts';
import { KINDS } from '../sim/kinds.ts';
import { pairEdge, until, type Cleanups } from './support.ts';
import {
  BROWSER_SUITE,
  CHROMIUM,
  expectAccessible,
  launchBrowser,
  newPage,
  portalCloud,
  shot,
  signInAt,
  unwind,
  untilMirrored,
} from './portal-support.ts';

/**
 * The cloud portal against a paired edge fed by the device simulator (`pnpm sim`): one device of
 * every kind it knows, announced by MQTT discovery as zigbee2mqtt, Tasmota and ESPHome do.
 */
const LIGHT = 'light.light_1';
const SENSOR = 'sensor.climate_sensor_2_temperature';

describe.skipIf(!CHROMIUM)(`portal with the device simulator ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let edge: Edge;
  let sim: Simulator;
  let browser: Browser;
  let owner: { email: string; password: string; token: string };

  beforeAll(async () => {
    cloud = await portalCloud(cleanups);
    owner = await cloud.user();
    ({ edge } = await pairEdge(cloud, cleanups, owner.token, 'Simulated home'));
    const creds = await edge.createMqttCredentials({ username: 'sim' });
    // ticks by hand (intervalMs 0): each sensor change below is one the test made
    sim = new Simulator({
      url: `mqtt://${creds.username}:${creds.password}@127.0.0.1:${edge.ports.mqtt}`,
      devices: KINDS.length,
      intervalMs: 0,
    });
    await sim.start();
    cleanups.push(() => sim.stop());
    await until(() => edge.states.get(SENSOR)?.state != null, 10_000, 'the temperature');
    // the simulator draws whether the light starts on: the test toggles it to the other state
    await until(() => edge.states.get(LIGHT)?.state != null, 10_000, 'the light');
    await untilMirrored(cloud, owner.token, LIGHT, edge.states.get(LIGHT)!.state!);
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  it('lists every simulated device, toggles a simulated light and shows a simulated sensor live', async () => {
    const { page, problems } = await newPage(browser);
    await signInAt(page, cloud, owner.email, owner.password);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();

    const toggle = page.locator(`[data-entity="${LIGHT}"]`).getByRole('switch');
    const wasOn = edge.states.get(LIGHT)?.state === 'on';
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe(String(wasOn));
    await toggle.click();
    // the simulator answers the command with the light's new state, as a real bulb does
    const expected = wasOn ? 'off' : 'on';
    await until(() => edge.states.get(LIGHT)?.state === expected, 10_000, `the simulated light ${expected}`);
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe(String(!wasOn));

    const sensor = page.locator(`[data-entity="${SENSOR}"]`);
    const before = edge.states.get(SENSOR)?.state;
    for (let i = 0; i < 20 && edge.states.get(SENSOR)?.state === before; i++) {
      await sim.tick();
      await new Promise((r) => setTimeout(r, 50));
    }
    const now = edge.states.get(SENSOR)?.state;
    expect(now).not.toBe(before);
    // the whole number, not a prefix of the old one (21 in 21.5)
    const shown = new RegExp(`(?<![\\d.])${String(now).replace('.', '\\.')}(?![\\d.])`);
    await expect.poll(() => sensor.textContent()).toMatch(shown);
    await shot(page, 'cloud-simulated-home');
    await expectAccessible(page, 'dashboard of simulated devices');

    await page.getByRole('link', { name: 'Devices' }).click();
    for (const d of sim.devices) await page.getByRole('link', { name: d.name, exact: true }).waitFor();
    expect(sim.devices).toHaveLength(KINDS.length);
    await shot(page, 'cloud-simulated-devices');
    await expectAccessible(page, 'simulated devices');
    expect(problems).toEqual([]);
  }, 120_000);
});
