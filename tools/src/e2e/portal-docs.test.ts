import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import { BROWSER_SUITE, CHROMIUM, expectAccessible, launch, newPage, shot } from './portal-support.ts';

/** The cloud's API reference (/docs): Swagger UI from the cloud itself, under the portal's CSP. */
describe.skipIf(!CHROMIUM)(`API reference at /docs ${BROWSER_SUITE}`, () => {
  let cloud: TestCloud;
  let browser: Browser;

  beforeAll(async () => {
    cloud = await startTestCloud();
    browser = await launch();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
  });

  it('renders the operations of /openapi.json with no CSP or console error and no request elsewhere', async () => {
    const { page, problems } = await newPage(browser);
    // 1.7 MB of JavaScript parsed on a shared 2-core machine: more than the default 10 s at times
    page.setDefaultTimeout(60_000);
    const origins = new Set<string>();
    page.on('request', (r) => origins.add(new URL(r.url()).origin));
    const csp: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
    });
    await page.goto(`${cloud.url}/docs`);
    // tags start folded: opening one lists its operations
    const tags = page.locator('.opblock-tag');
    await tags.first().waitFor();
    expect(await tags.count()).toBeGreaterThan(10);
    await page.locator('#operations-tag-edges').click();
    const edges = page.locator('.opblock-summary-path', { hasText: /^\/v1\/edges$/ });
    await edges.first().waitFor();
    expect(await edges.count()).toBe(2);
    await page.locator('#operations-tag-auth').click();
    await expect
      .poll(() => page.locator('.info .title').first().textContent())
      .toContain('Smart-Home Control Portal API');
    // open one operation: its responses come from the document's schemas
    await page.locator('.opblock-summary', { hasText: 'POST/v1/auth/token' }).first().click();
    await page.locator('.opblock.is-open .responses-table').first().waitFor();
    expect(await page.locator('.opblock.is-open').first().textContent()).toContain('401');
    await shot(page, 'docs');
    await expectAccessible(page, 'docs');
    expect(csp).toEqual([]);
    expect(problems).toEqual([]);
    expect([...origins]).toEqual([cloud.url]);
  }, 240_000);

  it('is readable phone-sized in dark mode (Swagger UI follows the system)', async () => {
    const { page, problems } = await newPage(browser, { dark: true, mobile: true });
    page.setDefaultTimeout(60_000);
    await page.goto(`${cloud.url}/docs`);
    await page.locator('#operations-tag-edges').click();
    await page
      .locator('.opblock-summary-path', { hasText: /^\/v1\/edges$/ })
      .first()
      .waitFor();
    await shot(page, 'docs-dark-mobile');
    await expectAccessible(page, 'docs dark');
    expect(problems).toEqual([]);
  }, 240_000);
});
