import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
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
  signInAt,
  unwind,
  untilMirrored,
} from './portal-support.ts';

/** The automations pages on a cloud with a paired edge and an MQTT lamp: editor, errors on their line, run, traces, switch, webhook. */
const LAMP = 'light.hall_lamp';

// line 6 holds the platform the API refuses: the page must place the message there
const INVALID = `alias: Hall light
description: from the browser test
triggers:
  - trigger: state
    entity_id: binary_sensor.door
  - platform: teleport
actions:
  - action: light.turn_on
    target:
      entity_id: ${LAMP}
`;
const VALID = INVALID.replace('platform: teleport', 'platform: webhook');

describe.skipIf(!CHROMIUM)(`portal automations ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let browser: Browser;
  let edge: Edge;
  let owner: { email: string; password: string; token: string };
  let lamp: { client: MqttClient; commands: string[] };
  /** the automation the first test creates and the others use */
  let id = '';

  beforeAll(async () => {
    cloud = await portalCloud(cleanups);
    ({ owner, edge, lamp } = await ownerWithLamp(cloud, cleanups, 'Hall', 'lamp', 'Hall'));
    await untilMirrored(cloud, owner.token, LAMP, 'off');
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  async function signIn(page: Page): Promise<void> {
    await signInAt(page, cloud, owner.email, owner.password);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
  }

  it('creates an automation in YAML, shows the refusal on its line, copies the webhook URL, shows JSON', async () => {
    const { page, problems } = await newPage(browser);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: cloud.url });
    await signIn(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Automations' }).click();
    await page.getByText('No automations yet.').waitFor();
    await page.getByRole('link', { name: 'New automation' }).click();

    const editor = page.getByRole('textbox', { name: 'Automation (YAML)' });
    await editor.fill(INVALID);
    await page.getByRole('button', { name: 'Create' }).click();
    const problem = page.locator('#automation-problem');
    await problem.waitFor();
    expect(await problem.getAttribute('data-line')).toBe('6');
    expect(await problem.textContent()).toMatch(/^Line 6: trigger\[1\]\.platform: /);
    expect(await editor.getAttribute('aria-describedby')).toBe('automation-problem');
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    // the caret is put on the line, so the keyboard lands where the fix goes
    // (string expressions: the tools' TypeScript has no DOM types)
    expect(
      await page.evaluate(
        '(() => { const a = document.activeElement; return [a.id, a.value.slice(0, a.selectionStart).split("\\n").length]; })()',
      ),
    ).toEqual(['automation-text', 6]);
    // the message sits right under line 6: the textarea grows with its text, lines are 1.5rem (24 px), padding 0.5rem
    const area = (await editor.boundingBox())!;
    const box = (await problem.boundingBox())!;
    expect(Math.round((box.y - area.y - 8) / 24)).toBe(6);
    await expectAccessible(page, 'automation editor with a problem');
    await shot(page, 'cloud-automation-error');

    // a YAML syntax error is placed by the parser, before any request
    await editor.fill('alias: x\ntrigger: [\n');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => problem.getAttribute('data-line')).toBe('3');

    await editor.fill(VALID);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Hall light' }).waitFor();
    expect(page.url()).toMatch(/\/automations\/[A-Za-z0-9_-]+$/);
    id = page.url().split('/').pop()!;
    const stored = await cloud.get(`/v1/automations/${id}`, { token: owner.token });
    expect(stored.body).toMatchObject({ alias: 'Hall light', enabled: true, edge_id: expect.any(Number) });
    expect(stored.body.trigger.map((t: { platform: string }) => t.platform)).toEqual(['state', 'webhook']);

    // the webhook URL, copied
    const hookUrl = `${cloud.url}/v1/automations/webhook/${stored.body.webhook_id}`;
    expect(await page.getByLabel('Webhook URL').inputValue()).toBe(hookUrl);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(hookUrl);

    // JSON mode shows the same definition; back to YAML
    await page.getByRole('button', { name: 'JSON' }).click();
    const json = JSON.parse(await page.getByRole('textbox', { name: 'Automation (JSON)' }).inputValue());
    expect(json).toMatchObject({ alias: 'Hall light', action: [{ service: 'light.turn_on' }] });
    await page.getByRole('button', { name: 'YAML' }).click();
    await page.getByRole('textbox', { name: 'Automation (YAML)' }).waitFor();
    expect(problems).toEqual([]);
  }, 120_000);

  it('runs it now (the MQTT command arrives), opens its trace by keyboard, switches it off from the list', async () => {
    const { page, problems } = await newPage(browser);
    await signIn(page);
    await page.goto(`${cloud.url}/automations/${id}`);
    await page.getByRole('heading', { name: 'Hall light' }).waitFor();

    // run now: the lamp gets its command over MQTT, the run shows step by step
    await page.getByRole('button', { name: 'Run now' }).click();
    await until(() => lamp.commands.includes('lamp/set ON'), 10_000, 'the lamp command');
    const run = page.locator('.runs > li').first();
    await expect.poll(() => run.locator('summary').textContent(), { timeout: 10_000 }).toMatch(/finished · 1 step$/);
    await run.locator('summary').focus();
    await page.keyboard.press('Enter');
    expect(await run.locator('.steps code').allTextContents()).toEqual(['action/0']);
    expect(await run.getByRole('heading', { name: 'Trigger variables' }).isVisible()).toBe(true);
    await expectAccessible(page, 'automation editor with a run');
    await shot(page, 'cloud-automation-trace');

    // the list: last run and the enabled switch, which writes through the API
    await page.getByRole('link', { name: '← All automations' }).click();
    const row = page.locator('.rows li', { hasText: 'Hall light' });
    await expect.poll(() => row.locator('.note').textContent()).toMatch(/^Last run: .* · finished$/);
    const toggle = row.getByRole('switch');
    expect(await toggle.getAttribute('aria-checked')).toBe('true');
    await toggle.click();
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('false');
    expect((await cloud.get(`/v1/automations/${id}`, { token: owner.token })).body.enabled).toBe(false);
    const off = await cloud.post(`/v1/automations/${id}/trigger`, { token: owner.token });
    expect([off.status, off.body]).toEqual([409, { message: 'automation is disabled' }]);
    await expectAccessible(page, 'automations list');
    await shot(page, 'cloud-automations');
    expect(problems).toEqual([]);
  }, 120_000);

  it("on the edge's own portal: the same automation from the local API, switched back on, run, its trace", async () => {
    const { page, problems } = await newPage(browser);
    const base = `http://127.0.0.1:${edge.ports.http}`;
    await page.goto(`${base}/`);
    await page.getByLabel('Username').fill('owner');
    await page.getByLabel('Password', { exact: true }).fill('hall lights');
    await page.getByLabel('Repeat the password').fill('hall lights');
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Automations' }).click();
    const row = page.locator('.rows li', { hasText: 'Hall light' });
    const toggle = row.getByRole('switch');
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('false');
    await toggle.click();
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('true');
    await row.getByRole('link', { name: 'Hall light' }).click();
    // the webhook URL is the edge's own receiver here
    expect(await page.getByLabel('Webhook URL').inputValue()).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/v1\/automations\/webhook\//,
    );
    expect(await page.getByLabel('Webhook URL').inputValue()).toContain(base);
    const sent = lamp.commands.length;
    await page.getByRole('button', { name: 'Run now' }).click();
    await until(
      () => lamp.commands.length > sent && lamp.commands.at(-1) === 'lamp/set ON',
      10_000,
      'the lamp command',
    );
    await expect.poll(() => page.locator('.runs > li').count(), { timeout: 10_000 }).toBe(2);
    await expectAccessible(page, 'edge automation editor');
    await shot(page, 'edge-automation');
    expect(problems).toEqual([]);
  }, 120_000);

  it('phone-sized and dark: the list and the editor stay usable; a failed switch says why', async () => {
    const { page, problems } = await newPage(browser, { mobile: true, dark: true });
    await signIn(page);
    await page.goto(`${cloud.url}/automations`);
    const row = page.locator('.rows li', { hasText: 'Hall light' });
    await row.waitFor();
    await expectAccessible(page, 'automations list (phone, dark)');
    await shot(page, 'cloud-automations-phone-dark');
    // the edge goes away: the switch's write fails and the page says so next to it
    await lamp.client.endAsync();
    await edge.stop();
    await until(
      async () =>
        (await cloud.get('/v1/edges', { token: owner.token })).body.every(
          (e: { status: string }) => e.status !== 'online',
        ),
      10_000,
      'the edge offline',
    );
    await row.getByRole('switch').click();
    await expect.poll(() => row.getByRole('alert').textContent()).toMatch(/offline/);
    expect(await row.getByRole('switch').getAttribute('aria-describedby')).toMatch(/-error$/);
    await row.getByRole('link', { name: 'Hall light' }).click();
    await page.getByRole('alert').waitFor();
    await shot(page, 'cloud-automation-offline-phone-dark');
    expect(problems).toEqual([]);
  }, 120_000);
});
