import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { MqttClient } from 'mqtt';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import { until, type Cleanups } from './support.ts';
import {
  BROWSER_SUITE,
  CHROMIUM,
  focused,
  focusInside,
  launchBrowser,
  newPage,
  ownerWithLamp,
  portalCloud,
  shot,
  tabAround,
  tabTo,
  unwind,
  type Owner,
  untilMirrored,
} from './portal-support.ts';

/**
 * Issue #15's bar, "everything works by keyboard": every page of the portal driven with the keys
 * alone (Tab, Shift+Tab, Enter, Space, Escape; no mouse), on a real cloud with a paired edge and
 * an MQTT lamp, and the edge's own portal. Every element the Tab key reaches shows its focus ring;
 * panels that take the focus give it back when they close.
 */
const LAMP = 'light.living_room_lamp';

describe.skipIf(!CHROMIUM)(`portal by keyboard only ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let browser: Browser;
  let owner: Owner;
  let lamp: { client: MqttClient; commands: string[] };

  beforeAll(async () => {
    cloud = await portalCloud(cleanups);
    ({ owner, lamp } = await ownerWithLamp(cloud, cleanups, 'Flat', 'lamp', 'Living room'));
    await untilMirrored(cloud, owner.token, LAMP, 'off');
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  const heading = (page: Page, name: string) => page.getByRole('heading', { name, exact: true, level: 1 }).waitFor();

  /** Tabs to each field in turn, types its value, then submits the form with Enter. */
  async function fillByKeys(page: Page, fields: Array<[RegExp, string]>): Promise<void> {
    for (const [label, value] of fields) {
      expect(await tabTo(page, label)).toMatchObject({ tag: 'input' });
      await page.keyboard.type(value);
    }
    await page.keyboard.press('Enter');
  }

  /** Back up to the main navigation with Shift+Tab and follow its link with Enter. */
  async function navTo(page: Page, link: string, title = link): Promise<void> {
    await tabTo(page, new RegExp(`^${link}$`), { back: true });
    expect(await focusInside(page, 'nav[aria-label="Main"]')).toBe(true);
    await page.keyboard.press('Enter');
    await heading(page, title);
    // the new page's heading has the focus (no ring: it is no control), and the tab its name
    await expect.poll(() => focused(page)).toEqual({ tag: 'h1', name: title, ring: false });
    expect(await page.title()).toBe(`${title} · Smart home`);
    // every page: each control in reach of Tab, each with its focus ring
    expect((await tabAround(page)).length).toBeGreaterThan(3);
  }

  it('signs in, toggles the lamp with Space, edits the dashboard, visits every page, Escape closes what opened', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(`${cloud.url}/`);
    await heading(page, 'Sign in');
    await fillByKeys(page, [
      [/^E-mail/, owner.email],
      [/^Password/, owner.password],
    ]);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await heading(page, 'Overview');

    // the lamp's switch: Space sends the MQTT command
    const lampSwitch = page.locator(`[data-entity="${LAMP}"]`).getByRole('switch');
    await lampSwitch.waitFor();
    await tabTo(page, /Lamp: off$/);
    await page.keyboard.press('Space');
    await until(() => lamp.commands.includes('lamp/set ON'), 10_000, 'the MQTT command');
    await shot(page, 'keyboard-dashboard');

    // edit mode takes the focus, adds a card, saves, and gives the focus back to its button
    await tabTo(page, /^Edit dashboard$/, { back: true });
    await page.keyboard.press('Enter');
    const editor = page.getByRole('region', { name: 'Edit dashboard' });
    await editor.waitFor();
    await expect.poll(() => focusInside(page, 'section.editor')).toBe(true);
    await tabTo(page, /^Add card$/);
    await page.keyboard.press('Enter');
    await expect.poll(() => editor.locator('ol.rows li').count()).toBe(1);
    await tabTo(page, /^Save dashboard$/);
    await page.keyboard.press('Enter');
    await editor.waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Edit dashboard', ring: true });
    const stored = await cloud.get('/v1/ui-dashboard', { token: owner.token });
    expect(stored.body[0].config.views[0].cards).toEqual([{ type: 'tile', entity: expect.any(String) }]);
    // a second view, with a card, from the keyboard: Enter in its title field adds it
    await page.keyboard.press('Enter');
    await editor.waitFor();
    await expect.poll(() => focusInside(page, 'section.editor')).toBe(true);
    await tabTo(page, /^New view title/);
    await page.keyboard.type('Lights');
    await page.keyboard.press('Enter');
    await editor.getByRole('heading', { name: 'Cards of “Lights”' }).waitFor();
    await tabTo(page, /^Add card$/);
    await page.keyboard.press('Enter');
    await tabTo(page, /^Save dashboard$/);
    await page.keyboard.press('Enter');
    await editor.waitFor({ state: 'detached' });
    const views = async () =>
      (
        (await cloud.get('/v1/ui-dashboard', { token: owner.token })).body[0].config.views as Array<{
          title: string;
          cards: unknown[];
        }>
      ).map((v) => [v.title, v.cards.length]);
    expect(await views()).toEqual([
      ['Home', 1],
      ['Lights', 1],
    ]);
    // Escape leaves edit mode without saving; the focus is back on the button
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Edit dashboard', ring: true });
    await page.keyboard.press('Enter');
    await editor.waitFor();
    await expect.poll(() => focusInside(page, 'section.editor')).toBe(true);
    await tabTo(page, /^Add card$/);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Escape');
    await editor.waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Edit dashboard', ring: true });
    expect(await views()).toEqual([
      ['Home', 1],
      ['Lights', 1],
    ]);
    // the views' tabs are one Tab stop; the arrows switch the view
    await tabTo(page, /^Home$/);
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Lights', ring: true });
    expect(await page.getByRole('tab', { name: 'Lights' }).getAttribute('aria-selected')).toBe('true');
    await page.keyboard.press('Home');
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Home', ring: true });
    await page.keyboard.press('Tab');
    expect((await focused(page)).name).not.toBe('Lights');

    // Homes: the revoke step takes the focus on its safe choice; Escape cancels and returns it
    await navTo(page, 'Homes');
    await tabTo(page, /^Revoke$/);
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Cancel', ring: true });
    expect(await focusInside(page, '[role="group"][aria-label="Revoke Flat?"]')).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Revoke', ring: true });
    expect(await page.getByRole('button', { name: 'Confirm revoke' }).count()).toBe(0);

    // Devices → a device
    await navTo(page, 'Devices');
    await tabTo(page, /^Living room$/);
    await page.keyboard.press('Enter');
    await heading(page, 'Living room');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'h1', name: 'Living room' });
    expect(await page.title()).toBe('Living room · Smart home');

    // Automations → the editor, its controls all reachable past the text area
    await navTo(page, 'Automations');
    await tabTo(page, /^New automation$/);
    await page.keyboard.press('Enter');
    await heading(page, 'New automation');
    await tabTo(page, /^Automation \(YAML\)$/);
    await tabTo(page, /^Create$/);

    // Integrations → the wizard takes the focus; Escape cancels it and the focus returns to Add
    await navTo(page, 'Integrations');
    await page.getByRole('button', { name: 'Add MQTT' }).waitFor();
    await tabTo(page, /^Add MQTT$/);
    await page.keyboard.press('Enter');
    const wizard = page.locator('section.wizard');
    await wizard.waitFor();
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'h2', name: 'Set up MQTT' });
    await tabTo(page, /^Cancel setup$/);
    await page.keyboard.press('Escape');
    await wizard.waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Add MQTT', ring: true });
    // the demo set up with its defaults and closed, then removed through its confirm step
    await tabTo(page, /^Add Demo$/);
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'h2', name: 'Set up Demo' });
    await tabTo(page, /^Submit$/);
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'h2', name: 'Set up Demo: done' });
    await tabTo(page, /^Close$/);
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Add Demo', ring: true });
    const entry = page.locator('[data-entry]', { hasText: 'Demo Home' });
    await entry.waitFor();
    await tabTo(page, /^Remove Demo Home$/, { back: true });
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Cancel', ring: true });
    await page.keyboard.press('Shift+Tab');
    expect(await focused(page)).toEqual({ tag: 'button', name: 'Confirm remove Demo Home', ring: true });
    await page.keyboard.press('Enter');
    await expect.poll(() => entry.count()).toBe(0);
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'h2', name: 'Configured' });

    // Organizations: one created from the form, then its page; the member removal step and Escape
    await navTo(page, 'Organizations');
    await fillByKeys(page, [[/^Organization name/, 'Family']]);
    await page.getByRole('link', { name: 'Family' }).waitFor();
    await tabTo(page, /^Family$/, { back: true });
    await page.keyboard.press('Enter');
    await heading(page, 'Family');
    await tabTo(page, new RegExp(`^Remove ${owner.email}$`));
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Cancel', ring: true });
    await page.keyboard.press('Escape');
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: `Remove ${owner.email}`, ring: true });
    // confirmed, the API refuses to remove the last admin: its words shown, the focus back on Remove
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Cancel', ring: true });
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').waitFor();
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: `Remove ${owner.email}`, ring: true });

    await navTo(page, 'Account');
    await shot(page, 'keyboard-account');

    // last, the edge revoked by keyboard: its row keeps no button, so its list's heading takes the focus
    await navTo(page, 'Homes');
    await tabTo(page, /^Revoke$/);
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toEqual({ tag: 'button', name: 'Cancel', ring: true });
    await page.keyboard.press('Shift+Tab');
    expect(await focused(page)).toEqual({ tag: 'button', name: 'Confirm revoke', ring: true });
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('[data-edge] .badge').textContent()).toBe('revoked');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'h2', name: 'My homes' });
    expect(problems).toEqual([]);
  });

  it("the edge's own portal: onboarding, sign-out and local sign-in by keyboard", async () => {
    const data = tempDir();
    cleanups.push(data.cleanup);
    const edge = await startEdge(data.dir);
    cleanups.push(() => edge.stop());
    const { page, problems } = await newPage(browser);
    await page.goto(`http://127.0.0.1:${edge.ports.http}/`);
    await heading(page, 'Welcome to your home');
    // a first load names the tab but leaves the focus where the browser puts it
    expect(await page.title()).toBe('Welcome to your home · Smart home');
    expect((await focused(page)).tag).toBe('body');
    await fillByKeys(page, [
      [/^Username/, 'owner'],
      [/^Password/, 'kitchen radio'],
      [/^Repeat the password/, 'kitchen radio'],
    ]);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await tabTo(page, /^Sign out$/);
    await page.keyboard.press('Enter');
    await heading(page, 'Sign in');
    await fillByKeys(page, [
      [/^Username/, 'owner'],
      [/^Password/, 'kitchen radio'],
    ]);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await navTo(page, 'Account');
    await shot(page, 'keyboard-edge-account');
    expect(problems).toEqual([]);
  });
});
