import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
import { SmtpSink, linkIn } from '@smarthome/cloud/testing/mail';
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

/**
 * The pages the cloud's mails link to, reached from the links of real mails (a real SMTP
 * server): address verification, password reset, the invitation page and transfers.
 */
describe.skipIf(!CHROMIUM)(`portal pages of the mails' links ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  const sink = new SmtpSink();
  let cloud: TestCloud;
  let browser: Browser;
  const fresh = (what: string) => `${what}-${Math.random().toString(36).slice(2)}@example.test`;

  beforeAll(async () => {
    await sink.start();
    cleanups.push(() => sink.stop());
    cloud = await portalCloud(cleanups, { smtpUrl: sink.url });
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  /** The link of the newest mail to `to` whose link path starts with `page`, on this cloud's portal. */
  async function mailedLink(to: string, page: string, subject?: RegExp): Promise<string> {
    const mail = await sink.waitFor(
      to,
      (m) => (m.parsed.text ?? '').includes(page) && (subject ? subject.test(m.parsed.subject ?? '') : true),
    );
    const link = linkIn(mail, `${new URL(cloud.url).protocol}//`);
    expect(link.pathname.startsWith(page)).toBe(true);
    return `${cloud.url}${link.pathname}${link.search}`;
  }

  it("an invitee registers from the mailed invitation, is told the API's email_not_verified, verifies from the mail and joins", async () => {
    const admin = await cloud.user();
    const org = (await cloud.post('/v1/organizations', { token: admin.token, body: { name: 'Lakeside' } })).body;
    const email = fresh('invitee');
    const inv = await cloud.post(`/v1/organizations/${org.id}/invitations`, { token: admin.token, body: { email } });
    expect(inv.status).toBe(201);
    const invitation = await mailedLink(email, '/invitations/');
    expect(invitation).toContain(`/invitations/${inv.body.id}?token=`);

    const { page, problems } = await newPage(browser);
    await page.goto(invitation);
    await page.getByRole('heading', { name: 'Join Lakeside' }).waitFor();
    await page.getByRole('link', { name: 'create an account' }).click();
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    // back on the invitation (with its token): the unverified account is refused in the API's words
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Not allowed (email_not_verified).');

    const verify = await mailedLink(email, '/verify-email');
    await page.goto(verify);
    await page.getByRole('heading', { name: 'Confirm your e-mail address' }).waitFor();
    await expectAccessible(page, 'verify-email');
    await shot(page, 'cloud-verify-email');
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Your address is confirmed (email verified).');
    // a used link says so, in the API's words
    const again = await newPage(browser);
    await again.page.goto(verify);
    await again.page.getByRole('button', { name: 'Confirm my address' }).click();
    await expect.poll(async () => (await again.page.getByRole('alert').textContent()) ?? '').not.toBe('');

    await page.goto(invitation);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('You joined Lakeside as member.');
    const members = (await cloud.get(`/v1/organizations/${org.id}/members`, { token: admin.token })).body as Array<{
      email: string;
    }>;
    expect(members.map((m) => m.email)).toContain(email);
    expect(problems).toEqual([]);
  }, 120_000);

  it('password reset: asked for on the sign-in page, confirmed from the mailed link, then the new password signs in', async () => {
    const u = await cloud.user(fresh('forgetful'));
    const { page, problems } = await newPage(browser, { mobile: true });
    await page.goto(`${cloud.url}/`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await expectAccessible(page, 'reset-password request');
    await page.getByLabel('E-mail').fill(u.email);
    await page.getByRole('button', { name: 'Mail me a link' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe('Check your mail: if an account has this address, a link to reset its password is on its way.');
    await shot(page, 'cloud-reset-password-request');

    const link = await mailedLink(u.email, '/reset-password');
    await page.goto(link);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await expectAccessible(page, 'reset-password confirm');
    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByLabel('Repeat the new password').fill('short');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    // the API's own validation message
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('password must be at least 8 characters');
    await page.getByLabel('New password', { exact: true }).fill('a brand new secret');
    await page.getByLabel('Repeat the new password').fill('a brand new secret');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe('Done: password changed; every session was signed out.');
    await shot(page, 'cloud-reset-password-done');
    // the old session is over; the new password signs in
    expect((await cloud.get('/v1/account', { token: u.token })).status).toBe(401);
    await page.getByRole('link', { name: 'Sign in with the new password' }).click();
    await submitSignIn(page, u.email, 'a brand new secret');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(problems).toEqual([]);
  }, 120_000);

  it('transfers: the mailed link asks to sign in, then the recipient declines one and accepts another', async () => {
    const sender = await cloud.user(fresh('sender'));
    const recipient = await cloud.user(fresh('recipient'));
    const offer = async (name: string) => {
      const dash = await cloud.put('/v1/ui-dashboard', {
        token: sender.token,
        body: { name, title: name, config: { views: [] } },
      });
      expect(dash.status).toBe(200);
      const t = await cloud.post('/v1/transfers', {
        token: sender.token,
        body: {
          to_email: recipient.email,
          resource_type: 'ui_dashboard',
          resource_id: String(dash.body.id),
          metadata: { name },
        },
      });
      expect(t.status).toBe(201);
      return t.body.id as number;
    };
    const declined = await offer('garden');
    const link = await mailedLink(recipient.email, `/transfers/${declined}`);

    const { page, problems } = await newPage(browser);
    await page.goto(link);
    await submitSignIn(page, recipient.email, recipient.password);
    await page.getByRole('heading', { name: 'The dashboard “garden”' }).waitFor();
    await expectAccessible(page, 'transfer');
    await shot(page, 'cloud-transfer');
    await page.getByRole('button', { name: 'Decline' }).click();
    // (the header's live badge is a status too)
    await expect
      .poll(() => page.locator('main').getByRole('status').textContent())
      .toBe('You declined it; the sender keeps it.');

    const accepted = await offer('cellar');
    await page.goto(await mailedLink(recipient.email, `/transfers/${accepted}`));
    await page.getByRole('button', { name: 'Accept the transfer' }).click();
    await expect.poll(() => page.locator('main').getByRole('status').textContent()).toContain('It is yours now.');
    const mine = (await cloud.get('/v1/ui-dashboard', { token: recipient.token })).body as Array<{ name: string }>;
    expect(mine.map((d) => d.name)).toEqual(['cellar']);
    const theirs = (await cloud.get('/v1/transfers', { token: sender.token })).body as Array<{
      id: number;
      status: string;
    }>;
    expect(Object.fromEntries(theirs.map((t) => [t.id, t.status]))).toEqual({
      [declined]: 'declined',
      [accepted]: 'accepted',
    });
    expect(problems).toEqual([]);
  }, 120_000);
});
