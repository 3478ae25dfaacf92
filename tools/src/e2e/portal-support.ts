import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import type { MqttClient } from 'mqtt';
import { ensurePortalBuilt } from '@smarthome/web/serve/build';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import type { Edge } from '@smarthome/edge/edge';
import { mqttLamp, pairEdge, until, type Cleanups } from './support.ts';

/** Shared by the portal's browser tests (not a test file). */

/** Debian's chromium (CI installs it with apt); CHROMIUM_PATH overrides. */
export const CHROMIUM =
  [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
    (p): p is string => !!p && existsSync(p),
  ) ?? null;
/** The describe name says why the tests did not run. */
export const BROWSER_SUITE = CHROMIUM
  ? 'in Chromium'
  : 'SKIPPED: chromium is not installed (apt-get install chromium, or set CHROMIUM_PATH)';

/** Screenshots of every page the tests visit (gitignored). */
export const ARTIFACTS = path.resolve(import.meta.dirname, '../../../.tmp/portal-artifacts');

export async function launch(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
  return chromium.launch({
    executablePath: CHROMIUM!,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

/** A fresh page (its own storage); any console error or CSP violation fails the test that reads `problems`. */
export async function newPage(
  browser: Browser,
  opts: { mobile?: boolean; dark?: boolean } = {},
): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport: opts.mobile ? { width: 390, height: 844 } : { width: 1280, height: 800 },
    colorScheme: opts.dark ? 'dark' : 'light',
  });
  const page = await context.newPage();
  // playwright-core has no test runner's defaults: without this a missing element waits forever
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('console', (m) => {
    // a failed request (401 on a wrong password, 403 on a view-only share) is logged by Chromium itself: expected
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return { page, problems };
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(bad, `axe on ${name}`).toEqual([]);
}

/** Runs the cleanups newest first; one that fails does not keep the others from running. */
export async function unwind(cleanups: Cleanups): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
}

/** The portal built and a cloud started with it; `cleanups` stops the cloud. */
export async function portalCloud(
  cleanups: Cleanups,
  overrides: Parameters<typeof startTestCloud>[0] = {},
): Promise<TestCloud> {
  await ensurePortalBuilt();
  const cloud = await startTestCloud(overrides);
  cleanups.push(() => cloud.stop());
  return cloud;
}

/** Chromium launched; `cleanups` closes it. */
export async function launchBrowser(cleanups: Cleanups): Promise<Browser> {
  const browser = await launch();
  cleanups.push(() => browser.close());
  return browser;
}

export type Owner = { email: string; password: string; token: string };

/** A new user who owns an edge named `home`, paired with `cloud`, and on it the MQTT lamp `key` of device `device` (OFF). */
export async function ownerWithLamp(
  cloud: TestCloud,
  cleanups: Cleanups,
  home: string,
  key: string,
  device: string,
): Promise<{ owner: Owner; edge: Edge; lamp: { client: MqttClient; commands: string[] } }> {
  const owner = await cloud.user();
  const { edge } = await pairEdge(cloud, cleanups, owner.token, home);
  const lamp = await mqttLamp(edge, cleanups, key, device);
  return { owner, edge, lamp };
}

/** Waits until the cloud mirrors `entity` in `state` (what the edge reports reaches the cloud a moment later). */
export async function untilMirrored(cloud: TestCloud, token: string, entity: string, state: string): Promise<void> {
  await until(
    async () => (await cloud.get(`/v1/entities/states/${entity}`, { token })).body?.state === state,
    10_000,
    `${entity} mirrored as ${state}`,
  );
}

/** Opens the cloud portal's start page and signs in there. */
export async function signInAt(page: Page, cloud: TestCloud, email: string, password: string): Promise<void> {
  await page.goto(`${cloud.url}/`);
  await submitSignIn(page, email, password);
}

/** Fills the cloud's sign-in form on the page as it is and submits it. */
export async function submitSignIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The element that has the focus: its tag, a name as a person would read it, and whether a focus ring shows. */
export interface Focused {
  tag: string;
  name: string;
  ring: boolean;
}

export function focused(page: Page): Promise<Focused> {
  return page.evaluate(() => {
    const d = (globalThis as any).document;
    const el = d.activeElement;
    if (!el || el === d.body) return { tag: 'body', name: '', ring: false };
    const style = (globalThis as any).getComputedStyle(el);
    const text = el.getAttribute('aria-label') ?? el.labels?.[0]?.textContent ?? el.textContent ?? '';
    return {
      tag: el.tagName.toLowerCase(),
      name: String(text).replace(/\s+/g, ' ').trim(),
      ring: el.matches(':focus-visible') && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0,
    };
  });
}

/** Whether the focused element is inside an element matching `selector`. */
export function focusInside(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((s) => !!(globalThis as any).document.activeElement?.closest(s), selector);
}

/**
 * Presses Tab (Shift+Tab with `back`) until the focused element's name matches; every element
 * passed on the way must show its focus ring. Focus leaving the page (to the browser) is skipped.
 */
export async function tabTo(page: Page, name: RegExp, opts: { back?: boolean; max?: number } = {}): Promise<Focused> {
  const ringless: string[] = [];
  for (let i = 0; i < (opts.max ?? 120); i++) {
    await page.keyboard.press(opts.back ? 'Shift+Tab' : 'Tab');
    const f = await focused(page);
    if (f.tag === 'body') continue;
    if (!f.ring) ringless.push(`${f.tag} "${f.name}"`);
    if (name.test(f.name)) {
      expect(ringless, 'focused without a visible focus ring').toEqual([]);
      return f;
    }
  }
  throw new Error(`no element named ${name} within reach of the Tab key`);
}

/**
 * Tabs once around the whole page, from its end (focus leaves for the browser there) to its end
 * again: every focusable element shows its ring. Their names in Tab order.
 */
export async function tabAround(page: Page): Promise<string[]> {
  const seen: string[] = [];
  const ringless: string[] = [];
  let started = false;
  for (let i = 0; i < 300; i++) {
    await page.keyboard.press('Tab');
    const f = await focused(page);
    if (f.tag === 'body') {
      if (seen.length) break;
      started = true;
      continue;
    }
    if (!started) continue;
    seen.push(`${f.tag} "${f.name}"`);
    if (!f.ring) ringless.push(`${f.tag} "${f.name}"`);
  }
  expect(ringless, 'focused without a visible focus ring').toEqual([]);
  return seen;
}
