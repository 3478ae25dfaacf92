import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ensurePortalBuilt } from '@smarthome/web/serve/build';
import type { Edge } from '@smarthome/edge/edge';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import { BROWSER_SUITE, CHROMIUM, expectAccessible, launch, newPage, shot } from './portal-support.ts';

/** Answers that hash a password (scrypt, ~0.1 s alone) take longer on a shared machine. */
const SLOW = { timeout: 15_000 };

/** The edge portal's Account page: an owner manages the home's local accounts; everyone changes their password. */
describe.skipIf(!CHROMIUM)(`edge portal: local accounts ${BROWSER_SUITE}`, () => {
  const data = tempDir();
  let edge: Edge;
  let browser: Browser;
  let base: string;

  async function signIn(page: Page, username: string, password: string) {
    await page.goto(`${base}/`);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account', exact: true }).waitFor();
  }

  beforeAll(async () => {
    await ensurePortalBuilt();
    edge = await startEdge(data.dir);
    base = `http://127.0.0.1:${edge.ports.http}`;
    const made = await fetch(`${base}/v1/local/onboarding`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'owner', password: 'owner password' }),
    });
    expect(made.status).toBe(201);
    browser = await launch();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await edge?.stop();
    data.cleanup();
  });

  it('the owner adds a member and sees the API refuse a taken name and deleting itself', async () => {
    const { page, problems } = await newPage(browser, { mobile: true });
    await signIn(page, 'owner', 'owner password');
    const accounts = page.getByRole('region', { name: 'Local accounts of this home' });
    await expect.poll(() => accounts.locator('li .entity-name').allTextContents()).toEqual(['owner']);
    await accounts.getByLabel('Username').fill('kid');
    await accounts.getByLabel('Password').fill('kid password');
    await accounts.getByRole('button', { name: 'Add account' }).click();
    // scrypt on a loaded machine: the answer may take seconds
    await accounts.locator('li .entity-name', { hasText: 'kid' }).waitFor();
    expect(await accounts.locator('li .entity-name').allTextContents()).toEqual(['owner', 'kid']);

    await accounts.getByLabel('Username').fill('KID');
    await accounts.getByLabel('Password').fill('kid password');
    await accounts.getByRole('button', { name: 'Add account' }).click();
    await expect.poll(() => accounts.getByRole('alert').textContent(), SLOW).toBe('local account KID already exists');

    page.once('dialog', (d) => void d.accept());
    await accounts.getByRole('button', { name: 'Delete account owner' }).click();
    await expect
      .poll(() => accounts.getByRole('alert').textContent())
      .toBe('you cannot delete your own account: ask another owner');
    await expectAccessible(page, 'edge account (owner)');
    await shot(page, 'edge-account-owner');
    expect(problems).toEqual([]);
  }, 120_000);

  it('the member signs in, has no account management, changes the password and signs in with the new one', async () => {
    const { page, problems } = await newPage(browser);
    await signIn(page, 'kid', 'kid password');
    await expect.poll(() => page.getByText('(member)').count()).toBe(1);
    expect(await page.getByRole('heading', { name: 'Local accounts of this home' }).count()).toBe(0);

    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password', { exact: true }).fill('new kid password');
    await page.getByLabel('Repeat the new password').fill('new kid password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), SLOW).toBe('the current password is wrong');
    await page.getByLabel('Current password').fill('kid password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'password' }).textContent(), SLOW)
      .toBe('password changed; your other sessions were signed out');
    await expectAccessible(page, 'edge account (member)');
    await shot(page, 'edge-account-member');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Username').fill('kid');
    await page.getByLabel('Password').fill('kid password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), SLOW).toBe('invalid_credentials');
    await page.getByLabel('Password').fill('new kid password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Account' }).waitFor();
    expect(problems).toEqual([]);
  }, 120_000);
});
