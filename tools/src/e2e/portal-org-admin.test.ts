import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
import { addMember, orgFixture } from '@smarthome/cloud/testing/fixtures';
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

/** The organization page's admin parts: branding editor (seen on the public page), declining, shares, require_mfa. */
describe.skipIf(!CHROMIUM)(`portal organization admin ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let browser: Browser;

  beforeAll(async () => {
    cloud = await portalCloud(cleanups);
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  const colorOf = (page: Page, selector: string, prop: 'backgroundColor') =>
    page
      .locator(selector)
      .first()
      .evaluate((el, p) => (globalThis as any).getComputedStyle(el)[p] as string, prop);

  it('branding edited with a live preview shows on the public invitation page, where the invitee declines', async () => {
    const { admin, org } = await orgFixture(cloud, 'Acme');
    const invitee = await cloud.user();
    const { page, problems } = await newPage(browser);
    await page.goto(`${cloud.url}/organizations/${org.id}`);
    await submitSignIn(page, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Branding' }).waitFor();

    // checked as the API checks: the field says why, and Save says it too without calling the API
    await page.getByLabel('Button colour', { exact: true }).fill('red;} body{');
    await page.locator('[id="branding.color-problem"]').waitFor();
    expect(await page.locator('[id="branding.color-problem"]').textContent()).toBe(
      'branding.color: must be a CSS color',
    );
    await page.getByLabel('Logo URL', { exact: true }).fill('javascript:alert(1)');
    expect(await page.locator('[id="branding.logoUrl-problem"]').textContent()).toBe(
      'branding.logoUrl: must be an http(s) URL',
    );
    await page.getByRole('button', { name: 'Save branding' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('branding.logoUrl: must be an http(s) URL');
    expect((await cloud.get(`/v1/organizations/${org.id}`, { token: admin.token })).body.branding).toEqual({});

    await page.getByLabel('Logo URL', { exact: true }).fill(`${cloud.url}/favicon.svg`);
    await page.getByLabel('Button colour', { exact: true }).fill('#0b6e4f');
    await page.getByLabel('Headline', { exact: true }).fill('Hello from Acme');
    await page.getByLabel('Button label').fill('Come aboard');
    await page.getByLabel('Background colour').fill('#fdf6e3');
    // the preview is the invitation page's component, updated as typed
    const preview = page.locator('.invitation.preview');
    await preview.getByRole('heading', { name: 'Hello from Acme' }).waitFor();
    expect(await colorOf(page, '.invitation.preview', 'backgroundColor')).toBe('rgb(253, 246, 227)');
    expect(await colorOf(page, '.invitation.preview button', 'backgroundColor')).toBe('rgb(11, 110, 79)');
    expect(await preview.getByRole('img', { name: 'Acme logo' }).getAttribute('src')).toBe(`${cloud.url}/favicon.svg`);
    await page.getByRole('button', { name: 'Save branding' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Branding saved.' }).count()).toBe(1);
    const saved = (await cloud.get(`/v1/organizations/${org.id}`, { token: admin.token })).body;
    expect(saved.branding).toEqual({ logoUrl: `${cloud.url}/favicon.svg`, color: '#0b6e4f' });
    expect(saved.inviteBranding).toEqual({
      headline: 'Hello from Acme',
      primaryButtonLabel: 'Come aboard',
      pageBackgroundColor: '#fdf6e3',
    });
    await expectAccessible(page, 'organization admin (branding)');
    await shot(page, 'cloud-organization-branding');

    // the public page, signed in as the invitee: the branding, then declining
    const inv = (
      await cloud.post(`/v1/organizations/${org.id}/invitations`, {
        token: admin.token,
        body: { email: invitee.email },
      })
    ).body as { id: string; token: string };
    const guest = await newPage(browser, { mobile: true });
    await guest.page.goto(`${cloud.url}/invitations/${inv.id}?token=${encodeURIComponent(inv.token)}`);
    await guest.page.getByRole('heading', { name: 'Hello from Acme' }).waitFor();
    await guest.page.getByRole('link', { name: 'Sign in to accept or decline' }).click();
    await submitSignIn(guest.page, invitee.email, invitee.password);
    const join = guest.page.getByRole('button', { name: 'Come aboard' });
    await join.waitFor();
    expect(await colorOf(guest.page, 'main', 'backgroundColor')).toBe('rgb(253, 246, 227)');
    expect(await join.evaluate((b) => (globalThis as any).getComputedStyle(b).backgroundColor as string)).toBe(
      'rgb(11, 110, 79)',
    );
    await expectAccessible(guest.page, 'invitation with accept and decline (phone)');
    await shot(guest.page, 'cloud-invitation-decline');
    await guest.page.getByRole('button', { name: 'Decline' }).click();
    await expect
      .poll(() => guest.page.getByRole('status').textContent())
      .toContain('You declined the invitation to Acme.');
    expect((await cloud.get(`/v1/invitations/${inv.token}`)).status).toBe(404);
    expect((await cloud.get('/v1/organizations', { token: invitee.token })).body).toEqual([]);

    await page.reload();
    await expect
      .poll(() => page.locator('li', { hasText: invitee.email }).locator('.badge').textContent())
      .toBe('declined');
    expect(problems).toEqual([]);
    expect(guest.problems).toEqual([]);
  }, 120_000);

  it("shares created, changed and deleted on the page; require_mfa refused without the admin's MFA, then on", async () => {
    const { admin, member, org } = await orgFixture(cloud, 'Sharers');
    const { page, problems } = await newPage(browser, { dark: true });
    await page.goto(`${cloud.url}/organizations/${org.id}`);
    await submitSignIn(page, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Shares' }).waitFor();
    await page.getByText('Nothing shared yet.').waitFor();

    // a light, view-only, to one member
    await page.getByLabel('Resource type').selectOption('entity');
    await page.getByLabel('Resource', { exact: true }).fill('light.porch');
    await page.getByLabel('With').selectOption(member.id);
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    const row = page.locator('.shares li', { hasText: 'light.porch' });
    await row.waitFor();
    const memberShares = async () =>
      (await cloud.get(`/v1/organizations/${org.id}/shares`, { token: member.token })).body as Array<
        Record<string, unknown>
      >;
    expect(await memberShares()).toEqual([
      expect.objectContaining({
        resource_type: 'entity',
        resource_id: 'light.porch',
        user_id: member.id,
        can_view: true,
        can_control: false,
        can_edit: false,
      }),
    ]);
    // the same again is refused in the API's words
    await page.getByLabel('Resource', { exact: true }).fill('light.porch');
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/^this resource is already shared with the same scope/);

    // changed in place (PATCH): the same share, so the member never loses access in between
    const before = (await memberShares())[0];
    await row.getByRole('checkbox', { name: 'control' }).check();
    await expect.poll(async () => (await memberShares())[0]?.can_control).toBe(true);
    expect(await memberShares()).toEqual([{ ...before, can_control: true }]);
    expect(await row.getByRole('checkbox', { name: 'control' }).isChecked()).toBe(true);
    await expectAccessible(page, 'organization admin (shares, dark)');
    await shot(page, 'cloud-organization-shares');
    await row.getByRole('button', { name: /^Delete the share of entity light.porch/ }).click();
    await page.getByText('Nothing shared yet.').waitFor();
    expect(await memberShares()).toEqual([]);

    // require_mfa: refused while the admin has no MFA, in the API's words; the switch stays off
    const mfa = page.getByRole('switch', { name: 'Require two-step sign-in of every member' });
    // click, not check(): the box ends unchecked again, which check() would take for a failure
    await mfa.click();
    await expect
      .poll(() => page.locator('section', { hasText: 'Sign-in policy' }).getByRole('alert').textContent())
      .toBe('enable multi-factor sign-in for your own account before requiring it of the members');
    expect(await mfa.isChecked()).toBe(false);
    // the admin enrols (as the account page does; the secret itself does not matter to the policy)
    await cloud.sql('UPDATE users SET totp_secret = ? WHERE id = ?', ['JBSWY3DPEHPK3PXP', admin.id]);
    await mfa.check();
    await expect
      .poll(async () => (await cloud.get(`/v1/organizations/${org.id}`, { token: admin.token })).body.require_mfa)
      .toBe(true);
    expect((await cloud.get('/v1/devices', { token: member.token, org: org.id })).body).toEqual({
      error: 'mfa_enrollment_required',
    });
    await mfa.uncheck();
    await expect
      .poll(async () => (await cloud.get(`/v1/organizations/${org.id}`, { token: admin.token })).body.require_mfa)
      .toBe(false);
    expect(problems).toEqual([]);
  }, 120_000);

  it("an admin changes a member's role and removes a member; the last admin's refusal shown as the API words it", async () => {
    const { admin, member, org } = await orgFixture(cloud, 'Roles');
    const other = await cloud.user();
    await addMember(cloud, org.id, other.id);
    const roleOf = async (userId: string) =>
      (
        (await cloud.get(`/v1/organizations/${org.id}/members`, { token: admin.token })).body as Array<{
          user_id: string;
          role: string;
        }>
      ).find((m) => m.user_id === userId)?.role;
    const { page, problems } = await newPage(browser, { mobile: true });
    await page.goto(`${cloud.url}/organizations/${org.id}`);
    await submitSignIn(page, admin.email, admin.password);
    const section = page.locator('section[aria-labelledby="members-title"]');
    const memberRole = page.getByLabel(`Role of ${member.email}`);
    await memberRole.waitFor();
    expect(await memberRole.inputValue()).toBe('member');
    await memberRole.selectOption('admin');
    await expect.poll(() => section.getByRole('status').textContent()).toBe(`${member.email} is now admin.`);
    expect(await roleOf(member.id)).toBe('admin');
    await memberRole.selectOption('member');
    await expect.poll(() => roleOf(member.id)).toBe('member');

    // the only admin demoting themselves: refused, and the select shows the stored role again
    await page.getByLabel(`Role of ${admin.email}`).selectOption('member');
    await expect
      .poll(() => section.getByRole('alert').textContent())
      .toBe('the last admin of an organization cannot be demoted');
    await expect.poll(() => page.getByLabel(`Role of ${admin.email}`).inputValue()).toBe('admin');
    expect(await roleOf(admin.id)).toBe('admin');

    // removing asks first; Cancel keeps the member
    await page.getByRole('button', { name: `Remove ${other.email}`, exact: true }).click();
    await section.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: `Remove ${other.email}`, exact: true }).click();
    await expectAccessible(page, 'organization members (phone, confirming a removal)');
    await shot(page, 'cloud-organization-members');
    await page.getByRole('button', { name: `Yes, remove ${other.email}` }).click();
    await page.locator(`[data-member="${other.email}"]`).waitFor({ state: 'detached' });
    expect(await roleOf(other.id)).toBeUndefined();
    expect(await roleOf(member.id)).toBe('member');
    expect(problems).toEqual([]);
  }, 120_000);
});
