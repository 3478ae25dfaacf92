import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
import { subscribe } from '@smarthome/cloud/testing/fixtures';
import type { Cleanups } from './support.ts';
import {
  BROWSER_SUITE,
  CHROMIUM,
  expectAccessible,
  launchBrowser,
  newPage,
  portalCloud,
  shot,
  submitSignIn,
  unwind,
} from './portal-support.ts';

/** RFC 6238 (SHA-1, 6 digits, 30 s), as an authenticator app computes it from the key the page shows. */
function totp(base32: string, at = Date.now()): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of base32.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const o = mac[mac.length - 1] & 0xf;
  return String((mac.readUInt32BE(o) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

/** The account page: two-step sign-in, backup codes, sessions, and a sign-out that ends the session on the server. */
describe.skipIf(!CHROMIUM)(`portal account ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let browser: Browser;

  beforeAll(async () => {
    cloud = await portalCloud(cleanups);
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  const refreshOf = (page: Page) =>
    page.evaluate(() => JSON.parse(localStorage.getItem('smarthome.session') ?? '{}').refresh_token as string);
  const refreshWorks = async (refresh: string) =>
    (await cloud.post('/v1/auth/token', { body: { grant_type: 'refresh_token', refresh_token: refresh } })).status;

  it('sign-out revokes the refresh token; other sessions are listed and signed out from the page', async () => {
    const u = await cloud.user();
    const { page, problems } = await newPage(browser);
    await page.goto(`${cloud.url}/account`);
    await submitSignIn(page, u.email, u.password);
    await page.getByRole('heading', { name: 'Signed-in devices' }).waitFor();
    const sessions = page.locator('.sessions li');
    // the session of cloud.user() (Node's fetch) and this browser's
    await expect.poll(() => sessions.count()).toBe(2);
    await expect.poll(() => page.locator('.sessions li', { hasText: 'this device' }).count()).toBe(1);
    await expectAccessible(page, 'account');
    await shot(page, 'cloud-account');
    await page.getByRole('button', { name: /^Sign out node at / }).click();
    await expect.poll(() => sessions.count()).toBe(1);
    expect(await refreshWorks(u.refresh)).toBe(401);
    expect((await cloud.get('/v1/account', { token: u.token })).status).toBe(401);

    const refresh = await refreshOf(page);
    expect(refresh).toBeTruthy();
    await page.locator('header').getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // not only forgotten by the page: the server no longer takes it
    expect(await refreshWorks(refresh)).toBe(401);
    expect(problems).toEqual([]);
  }, 120_000);

  it('two-step sign-in: enrolled with the QR key and a first code, backup codes sign in once, then turned off', async () => {
    const u = await cloud.user();
    const { page, problems } = await newPage(browser, { dark: true });
    await page.goto(`${cloud.url}/account`);
    await submitSignIn(page, u.email, u.password);
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    // a wrong password is refused in the API's words
    await page.getByLabel('Current password', { exact: true }).fill('wrong password');
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Not allowed (verification_failed).');
    await page.getByLabel('Current password', { exact: true }).fill(u.password);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const qr = page.getByRole('img', { name: 'QR code for the authenticator app' });
    await qr.waitFor();
    expect(await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
    const secret = (await page.locator('.totp-secret').textContent())!;
    await expectAccessible(page, 'account MFA enrolment (dark)');
    await shot(page, 'cloud-account-mfa');
    await page.getByLabel('Code from the app').fill(totp(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.locator('.badge', { hasText: /^on$/ }).waitFor();
    expect((await cloud.get('/v1/account', { token: u.token })).body.mfa_enabled).toBe(true);

    await page.getByLabel('Current password (for backup codes)').fill(u.password);
    await page.getByRole('button', { name: 'Make new backup codes' }).click();
    const codes = page.locator('.codes code');
    await expect.poll(() => codes.count()).toBe(10);
    const [first, second] = await codes.allTextContents();

    // signing in now asks for a code after the password; a backup code works
    await page.locator('header').getByRole('button', { name: 'Sign out' }).click();
    await submitSignIn(page, u.email, u.password);
    const code = page.getByLabel('Code from your authenticator app (or a backup code)');
    await code.fill('000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('invalid_mfa_code');
    await code.fill(first);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('header').getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto(`${cloud.url}/account`);

    await page.getByLabel('Current password', { exact: true }).fill(u.password);
    await page.getByLabel('Code from the app or a backup code').fill(second);
    await page.getByRole('button', { name: 'Turn off two-step sign-in' }).click();
    await page.locator('.badge', { hasText: /^off$/ }).waitFor();
    expect((await cloud.get('/v1/account', { token: u.token })).body.mfa_enabled).toBe(false);
    expect(problems).toEqual([]);
  }, 120_000);

  it('a personal access token is copied from the page and revoked (then 401); usage bars and subscriptions', async () => {
    const u = await cloud.user();
    await subscribe(cloud, u.id, 3, 'expired');
    const { page, problems } = await newPage(browser, { mobile: true });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: cloud.url });
    await page.goto(`${cloud.url}/account`);
    await submitSignIn(page, u.email, u.password);
    await page.getByLabel('Token name').fill('backup script');
    await page.getByRole('button', { name: 'Create token' }).click();
    const pat = (await page.locator('.secret code').textContent())!;
    expect(pat).toMatch(/^shp_pat_/);
    await page.getByRole('button', { name: 'Copy token' }).click();
    await page.locator('.secret', { hasText: 'Copied.' }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText() as Promise<string>)).toBe(pat);
    expect((await cloud.get('/v1/account', { token: pat })).status).toBe(200);

    // the free plan's limits as bars; the expired business subscription listed
    const meters = page.locator('.usage meter');
    await expect.poll(() => meters.count()).toBe(3);
    expect(await page.locator('.usage li').allInnerTexts()).toEqual([
      expect.stringMatching(/^Devices\s+0 of 10$/),
      expect.stringMatching(/^Automations\s+0 of 5$/),
      expect.stringMatching(/^Integrations\s+0 of 3$/),
    ]);
    expect(await meters.first().getAttribute('max')).toBe('10');
    expect(
      await page.getByRole('meter', { name: 'Devices' }).evaluate((m) => (m as unknown as { value: number }).value),
    ).toBe(0);
    expect(await page.locator('.subscriptions li').innerText()).toMatch(/^business\s+expired\s+app_store · since /);
    await expectAccessible(page, 'account with tokens and billing (phone)');
    await shot(page, 'cloud-account-billing');

    await page.getByRole('button', { name: 'Revoke token backup script' }).click();
    await page.getByRole('button', { name: 'Revoke token backup script' }).waitFor({ state: 'detached' });
    expect((await cloud.get('/v1/account', { token: pat })).status).toBe(401);
    expect(problems).toEqual([]);
  }, 120_000);

  it('password changed on the page (then sign-in takes only the new one); e-mail change answered as the API words it', async () => {
    const u = await cloud.user();
    const taken = await cloud.user();
    const { page, problems } = await newPage(browser);
    await page.goto(`${cloud.url}/account`);
    await submitSignIn(page, u.email, u.password);
    const section = page.locator('section[aria-labelledby="credentials-title"]');
    await section.waitFor();
    const next = 'a brand new passphrase 42';
    await page.getByLabel('Current password (to change it)').fill('wrong password');
    await page.getByLabel('New password').fill(next);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => section.getByRole('alert').textContent()).toBe('Not allowed (verification_failed).');
    await page.getByLabel('Current password (to change it)').fill(u.password);
    await page.getByLabel('New password').fill(next);
    await page.getByRole('button', { name: 'Change password' }).click();
    await section.getByRole('status').waitFor();
    expect(await section.getByRole('alert').count()).toBe(0);
    const grant = (password: string) =>
      cloud.post('/v1/auth/token', { body: { grant_type: 'password', email: u.email, password } });
    expect((await grant(u.password)).status).not.toBe(200);
    const signedIn = await grant(next);
    expect(signedIn.status).toBe(200);
    // other sessions ended (this browser's stays): the one from before no longer works
    expect((await cloud.get('/v1/account', { token: u.token })).status).toBe(401);
    const token = signedIn.body.access_token as string;

    // e-mail: an address in use is refused in the API's words; a free one is taken, unconfirmed
    await page.getByLabel('New sign-in address').fill(taken.email);
    await page.getByLabel('Current password (to change the address)').fill(next);
    await page.getByRole('button', { name: 'Change address' }).click();
    await expect.poll(() => section.getByRole('alert').textContent()).toBe('email already registered');
    const fresh = `new-${u.email}`;
    await page.getByLabel('New sign-in address').fill(fresh);
    await page.getByLabel('Current password (to change the address)').fill(next);
    await page.getByRole('button', { name: 'Change address' }).click();
    await section.getByRole('status').waitFor();
    const account = (await cloud.get('/v1/account', { token })).body;
    expect(account.email).toBe(fresh);
    expect(account.email_verified).toBe(false);
    await page.getByText(fresh, { exact: false }).first().waitFor();
    await expectAccessible(page, 'account password and e-mail');
    await shot(page, 'cloud-account-credentials');

    // signing in again takes the new password
    await page.locator('header').getByRole('button', { name: 'Sign out' }).click();
    await submitSignIn(page, fresh, next);
    await page.locator('header').getByRole('button', { name: 'Sign out' }).waitFor();
    expect(problems).toEqual([]);
  }, 120_000);
});
