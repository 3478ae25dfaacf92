import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
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

/** Organization pages and the branded public invitation page, accepted by the invitee in the browser. */
describe.skipIf(!CHROMIUM)(`portal organizations and invitations ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let browser: Browser;

  beforeAll(async () => {
    cloud = await portalCloud(cleanups);
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  it('an admin invites from the organization page; the invitee accepts on the branded page after signing in', async () => {
    const admin = await cloud.user();
    const invitee = await cloud.user();
    const { page, problems } = await newPage(browser);
    await page.goto(`${cloud.url}/organizations`);
    await submitSignIn(page, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Organizations' }).waitFor();
    await page.getByLabel('Organization name').fill('Family');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('link', { name: 'Family' }).click();
    await page.getByRole('heading', { name: 'Invitations' }).waitFor();
    await page.getByLabel('E-mail to invite').fill(invitee.email);
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const link = (await page.locator('.secret code').textContent())!;
    expect(link).toMatch(new RegExp(`^${cloud.url}/invitations/\\S+$`));
    await page.getByLabel('E-mail to invite').fill('someone-else@example.test');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByRole('button', { name: 'Revoke the invitation of someone-else@example.test' }).click();
    await expect
      .poll(() => page.locator('li', { hasText: 'someone-else@example.test' }).locator('.badge').textContent())
      .toBe('revoked');
    await expectAccessible(page, 'organization');
    await shot(page, 'cloud-organization');

    const org = (await cloud.get('/v1/organizations', { token: admin.token })).body[0];
    expect(
      (
        await cloud.patch(`/v1/organizations/${org.id}/branding`, {
          token: admin.token,
          body: {
            branding: { color: '#5b2a86' },
            inviteBranding: {
              headline: 'Welcome to the Family',
              primaryButtonLabel: 'Join us',
              pageBackgroundColor: '#fdf6e3',
            },
          },
        })
      ).status,
    ).toBe(200);

    // the invitee, signed out, opens the link
    const guest = await newPage(browser);
    await guest.page.goto(link);
    await guest.page.getByRole('heading', { name: 'Welcome to the Family' }).waitFor();
    expect(
      await guest.page
        .locator('main')
        .evaluate((m) => (globalThis as any).getComputedStyle(m).backgroundColor as string),
    ).toBe('rgb(253, 246, 227)');
    await expectAccessible(guest.page, 'invitation (signed out)');
    await shot(guest.page, 'cloud-invitation');
    await guest.page.getByRole('link', { name: 'Sign in to accept' }).click();
    await submitSignIn(guest.page, invitee.email, invitee.password);
    const join = guest.page.getByRole('button', { name: 'Join us' });
    await join.waitFor();
    expect(await join.evaluate((b) => (globalThis as any).getComputedStyle(b).backgroundColor as string)).toBe(
      'rgb(91, 42, 134)',
    );
    await join.click();
    await expect.poll(() => guest.page.getByRole('status').textContent()).toContain('You joined Family as member.');
    const members = (await cloud.get(`/v1/organizations/${org.id}/members`, { token: admin.token })).body as Array<{
      email: string;
      role: string;
    }>;
    expect(members.map((m) => `${m.email}:${m.role}`).sort()).toEqual(
      [`${admin.email}:admin`, `${invitee.email}:member`].sort(),
    );

    await page.reload();
    // the admin sees each member's role in its select
    await expect.poll(() => page.getByLabel(`Role of ${invitee.email}`).inputValue()).toBe('member');
    expect(problems).toEqual([]);
    expect(guest.problems).toEqual([]);
  }, 120_000);
});
