import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { MqttClient } from 'mqtt';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
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
  signInAt,
  unwind,
} from './portal-support.ts';

/** Dashboard cards beyond the basic ones (thermostat, markdown, history-graph) and edit mode adding views, on a cloud with a paired edge. */
const HEATER = 'climate.office_heater';

describe.skipIf(!CHROMIUM)(`portal dashboard cards ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let browser: Browser;
  let owner: { email: string; password: string; token: string };
  let device: { client: MqttClient; commands: string[] };

  beforeAll(async () => {
    cloud = await portalCloud(cleanups);
    ({ owner, lamp: device } = await ownerWithLamp(cloud, cleanups, 'Office', 'desk', 'Desk'));
    // a thermostat announced by MQTT discovery, as zigbee2mqtt does
    await device.client.publishAsync(
      'homeassistant/climate/heater/config',
      JSON.stringify({
        name: 'Heater',
        uniq_id: 'heater',
        modes: ['off', 'heat'],
        mode_command_topic: 'heater/mode/set',
        mode_state_topic: 'heater/mode',
        temperature_command_topic: 'heater/temp/set',
        temperature_state_topic: 'heater/temp',
        current_temperature_topic: 'heater/current',
        temp_step: 0.5,
        dev: { ids: 'heater-1', name: 'Office' },
      }),
      { qos: 1, retain: true },
    );
    await device.client.subscribeAsync('heater/+/set');
    await device.client.publishAsync('heater/mode', 'heat', { qos: 1 });
    await device.client.publishAsync('heater/temp', '20', { qos: 1 });
    await device.client.publishAsync('heater/current', '18.5', { qos: 1 });
    await until(
      async () =>
        (await cloud.get(`/v1/entities/states/${HEATER}`, { token: owner.token })).body?.attributes
          ?.current_temperature === 18.5,
      10_000,
      'the mirrored thermostat',
    );
    const dash = await cloud.put('/v1/ui-dashboard', {
      token: owner.token,
      body: {
        name: 'home',
        title: 'Office',
        config: {
          views: [
            {
              title: 'Main',
              cards: [
                { type: 'thermostat', entity: HEATER },
                {
                  type: 'markdown',
                  title: 'Notes',
                  content:
                    '# Welcome\nThe **heater** is *on* a `timer`.\n\n- water the plants\n- [manual](https://example.org/manual)',
                },
                { type: 'markdown', title: 'Templated', content: 'Heater: {{ states("climate.office_heater") }}' },
                { type: 'history-graph', title: 'Heating history', entities: [HEATER], hours_to_show: 6 },
              ],
            },
          ],
        },
      },
    });
    expect(dash.status).toBe(200);
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  async function signIn(page: Page): Promise<void> {
    await signInAt(page, cloud, owner.email, owner.password);
    await page.getByRole('heading', { name: 'Office', exact: true }).waitFor();
  }

  it('thermostat: raising the target sends the MQTT command, the mode select too; markdown renders safely', async () => {
    const { page, problems } = await newPage(browser);
    await signIn(page);
    const card = page.locator(`.thermostat[data-entity="${HEATER}"]`);
    await expect.poll(() => card.locator('.current').textContent()).toBe('18.5');
    await expect.poll(() => card.locator('.target').textContent()).toBe('20');
    const notes = page.locator('.markdown-card', { hasText: 'Notes' });
    expect(await notes.locator('h3').textContent()).toBe('Welcome');
    expect(await notes.locator('strong').textContent()).toBe('heater');
    expect(await notes.locator('li').allTextContents()).toEqual(['water the plants', 'manual']);
    expect(await notes.getByRole('link', { name: 'manual' }).getAttribute('href')).toBe('https://example.org/manual');
    // the cloud renders templates over the states the caller may view
    const templated = page.locator('.markdown-card', { hasText: 'Templated' });
    await expect.poll(() => templated.locator('p').first().textContent()).toBe('Heater: heat');
    expect(await templated.locator('.note').count()).toBe(0);
    // history comes from the edge through the cloud: the current state; a mode has no numeric line
    const history = page.locator('.history-graph');
    await expect.poll(() => history.locator('.value-now').textContent()).toBe('heat');
    await expect.poll(() => history.locator('.note').textContent()).toBe('No numeric states in this period.');
    await expectAccessible(page, 'dashboard cards');
    await shot(page, 'cloud-dashboard-cards');

    await card.getByRole('button', { name: /^Raise .*Heater target$/ }).click();
    await until(() => device.commands.includes('heater/temp/set 20.5'), 10_000, 'the temperature command');
    await device.client.publishAsync('heater/temp', '20.5', { qos: 1 });
    await expect.poll(() => card.locator('.target').textContent()).toBe('20.5');
    await card.getByLabel('Mode').selectOption('off');
    await until(() => device.commands.includes('heater/mode/set off'), 10_000, 'the mode command');
    expect(problems).toEqual([]);
  }, 120_000);

  it('edit mode adds a view with a thermostat and a markdown card, and removes none of the first', async () => {
    const { page, problems } = await newPage(browser, { mobile: true });
    await signIn(page);
    await page.getByRole('button', { name: 'Edit dashboard' }).click();
    await page.getByLabel('New view title').fill('Heating');
    await page.getByRole('button', { name: 'Add view' }).click();
    await page.getByRole('heading', { name: 'Cards of “Heating”' }).waitFor();
    await page.getByLabel('Card type').selectOption('thermostat');
    await page.getByLabel('Entity').selectOption(HEATER);
    await page.getByRole('button', { name: 'Add card' }).click();
    await page.getByLabel('Card type').selectOption('markdown');
    await page.getByRole('textbox', { name: 'Markdown' }).fill('Keep it **warm**');
    await page.getByRole('button', { name: 'Add card' }).click();
    await expectAccessible(page, 'dashboard editor');
    await shot(page, 'cloud-dashboard-editor-views');
    await page.getByRole('button', { name: 'Save dashboard' }).click();
    await page.getByRole('tab', { name: 'Heating' }).click();
    await page.locator('.markdown-card strong', { hasText: 'warm' }).waitFor();
    const stored = (await cloud.get('/v1/ui-dashboard', { token: owner.token })).body[0].config.views as Array<{
      title: string;
      cards: unknown[];
    }>;
    expect(stored.map((v) => v.title)).toEqual(['Main', 'Heating']);
    expect(stored[0].cards).toHaveLength(4);
    expect(stored[1].cards).toEqual([
      { type: 'thermostat', entity: HEATER },
      { type: 'markdown', content: 'Keep it **warm**' },
    ]);
    expect(problems).toEqual([]);
  }, 120_000);
});
