import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';

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

/** Fills the cloud's sign-in form on the page as it is and submits it. */
export async function submitSignIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
