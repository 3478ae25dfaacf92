import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ensurePortalBuilt } from '@smarthome/web/serve/build';
import type { Integration } from '@smarthome/edge/config-flow/types';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import { oauthProvider } from './oauth-provider.ts';
import type { Cleanups } from './support.ts';
import { BROWSER_SUITE, CHROMIUM, expectAccessible, launchBrowser, newPage, shot, unwind } from './portal-support.ts';

/**
 * The Integrations page on an edge's own portal (its local API, no cloud): the demo flow, a
 * test integration whose form has every data_schema field type, and an OAuth sign-in whose
 * provider sends the browser back to the edge's callback, which finishes the flow and sends it on
 * to the portal.
 */
/** An integration whose one form has every field type; the input it was finally given. */
function sprinkler(): { integration: Integration; received: Array<Record<string, unknown>> } {
  const received: Array<Record<string, unknown>> = [];
  const schema = [
    { name: 'name', type: 'string' as const, required: true, description: 'Shown on the dashboard' },
    { name: 'zones', type: 'integer' as const, required: true, default: 4, min: 1, max: 8 },
    { name: 'flow_rate', type: 'float' as const },
    { name: 'rain_sensor', type: 'boolean' as const, default: true },
    { name: 'mode', type: 'select' as const, required: true, options: ['eco', 'normal', 'turbo'] },
    { name: 'api_key', type: 'password' as const, required: true },
    { name: 'status_page', type: 'url' as const },
  ];
  return {
    received,
    integration: {
      domain: 'sprinkler',
      name: 'Sprinkler',
      createFlow: () => ({
        firstStep: 'user',
        step: (_step, input) => {
          if (!input) return { type: 'form', stepId: 'user', data_schema: schema };
          received.push(input);
          return { type: 'create_entry', title: String(input.name), data: input };
        },
      }),
    },
  };
}

describe.skipIf(!CHROMIUM)(`portal integrations on an edge (its local API) ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let base: string;
  let browser: Browser;
  const garden = sprinkler();
  let provider: { url: string; exchanged: string[] };

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${base}/integrations`);
    await page.getByLabel('Username').fill('owner');
    await page.getByLabel('Password').fill('kitchen radio');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Integrations' }).waitFor();
  }

  beforeAll(async () => {
    await ensurePortalBuilt();
    const data = tempDir();
    cleanups.push(data.cleanup);
    provider = await oauthProvider(cleanups);
    const oauth = {
      clientId: 'portal-test',
      clientSecret: 'shh',
      authorizeUrl: `${provider.url}/authorize`,
      tokenUrl: `${provider.url}/token`,
      redirectUri: '',
    };
    const edge = await startEdge(data.dir, { extraIntegrations: [garden.integration], oauth });
    cleanups.push(() => edge.stop());
    base = `http://127.0.0.1:${edge.ports.http}`;
    // the edge's own callback; its port is known only now (the integration reads this object per flow)
    oauth.redirectUri = `${base}/v1/config_flow/oauth/callback`;
    const onboard = await fetch(`${base}/v1/local/onboarding`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'owner', password: 'kitchen radio' }),
    });
    expect(onboard.status).toBe(201);
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  it('the demo flow: defaults, a field error, the entry; a second one aborts; removed', async () => {
    const { page, problems } = await newPage(browser, { mobile: true });
    await signIn(page);
    // on an edge the flows run right there: no home to choose, none missing
    expect(await page.getByText('No home in this scope').count()).toBe(0);
    await page.getByRole('button', { name: 'Add Demo' }).click();
    expect(await page.getByRole('textbox', { name: 'Name' }).inputValue()).toBe('Demo Home');
    const interval = page.getByRole('spinbutton', { name: 'Update interval' });
    expect(await interval.inputValue()).toBe('30');
    await page.getByRole('textbox', { name: 'Name' }).fill('My flat');
    await interval.fill('0');
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect
      .poll(() => page.locator('[data-field="update_interval"] .field-error').textContent())
      .toBe('invalid_interval');
    await expectAccessible(page, 'edge integration form');
    await shot(page, 'edge-integrations-form');
    await interval.fill('5');
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => page.locator('.wizard [role="status"]').textContent()).toBe('My flat was added.');
    const row = page.locator('[data-entry]', { hasText: 'My flat' });
    await row.waitFor();
    await page.getByRole('button', { name: 'Close' }).click();

    await page.getByRole('button', { name: 'Add Demo' }).click();
    await expect
      .poll(() => page.locator('.wizard [role="alert"]').textContent())
      .toBe('Setup ended: Only one of these can be set up, and it already is (single_instance_allowed).');
    await page.getByRole('button', { name: 'Close' }).click();

    await row.getByRole('button', { name: 'Remove My flat' }).click();
    await row.getByRole('button', { name: 'Confirm remove My flat' }).click();
    await expect.poll(() => row.count()).toBe(0);
    await shot(page, 'edge-integrations');
    expect(problems).toEqual([]);
  }, 120_000);

  it('a form of every field type: controls from the data_schema, errors by their fields, the typed values sent', async () => {
    const { page, problems } = await newPage(browser, { dark: true });
    await signIn(page);
    await page.getByRole('button', { name: 'Add Sprinkler' }).click();
    await page.getByRole('heading', { name: 'Set up Sprinkler' }).waitFor();
    const zones = page.getByRole('spinbutton', { name: 'Zones' });
    expect([await zones.inputValue(), await zones.getAttribute('min'), await zones.getAttribute('max')]).toEqual([
      '4',
      '1',
      '8',
    ]);
    expect(await page.getByRole('checkbox', { name: 'Rain sensor' }).isChecked()).toBe(true);
    expect(await page.getByLabel('Mode').locator('option').allTextContents()).toEqual(['—', 'eco', 'normal', 'turbo']);
    expect(await page.getByLabel('Api key').getAttribute('type')).toBe('password');
    expect(await page.getByRole('textbox', { name: 'Name' }).getAttribute('aria-describedby')).toContain('-desc');
    expect(await page.locator('.flow-field .required').count()).toBe(4);
    await zones.fill('9');
    await page.getByRole('textbox', { name: 'Status page' }).fill('ftp://garden');
    await page.getByRole('button', { name: 'Submit' }).click();
    const errorOf = (field: string) => page.locator(`[data-field="${field}"] .field-error`).textContent();
    await expect.poll(() => errorOf('zones')).toBe('Enter a number between 1 and 8 (out_of_range).');
    expect(await errorOf('name')).toBe('Required (required).');
    expect(await errorOf('mode')).toBe('Required (required).');
    expect(await errorOf('api_key')).toBe('Required (required).');
    expect(await errorOf('status_page')).toBe('Enter an http or https address (invalid_url).');
    expect(garden.received).toEqual([]);
    await expectAccessible(page, 'integration form of every field type (dark)');
    await shot(page, 'edge-integrations-field-types');

    await page.getByRole('textbox', { name: 'Name' }).fill('Garden');
    await zones.fill('6');
    await page.getByRole('spinbutton', { name: 'Flow rate' }).fill('2.5');
    // by keyboard: the checkbox off with Space
    await page.getByRole('checkbox', { name: 'Rain sensor' }).focus();
    await page.keyboard.press('Space');
    await page.getByLabel('Mode').selectOption('turbo');
    await page.getByLabel('Api key').fill('s3cret');
    await page.getByRole('textbox', { name: 'Status page' }).fill('');
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => page.locator('.wizard [role="status"]').textContent()).toBe('Garden was added.');
    expect(garden.received).toEqual([
      { name: 'Garden', zones: 6, flow_rate: 2.5, rain_sensor: false, mode: 'turbo', api_key: 's3cret' },
    ]);
    await page.locator('[data-entry]', { hasText: 'Garden' }).waitFor();
    expect(problems).toEqual([]);
  }, 120_000);

  it("OAuth: the provider sends the browser to the edge's callback, which finishes the flow; the portal shows the entry", async () => {
    const { page, problems } = await newPage(browser, { dark: true });
    await signIn(page);
    await page.getByRole('button', { name: 'Add OAuth Demo Cloud' }).click();
    const link = page.getByRole('link', { name: 'Sign in to OAuth Demo Cloud' });
    expect(new URL((await link.getAttribute('href'))!).searchParams.get('redirect_uri')).toBe(
      `${base}/v1/config_flow/oauth/callback`,
    );
    // the edge's answer to the browser: 303 to the portal's return page, naming the flow
    const hops: string[] = [];
    page.on('response', (res) => {
      const url = new URL(res.url());
      if (url.pathname === '/v1/config_flow/oauth/callback') hops.push(`${res.status()} ${res.headers().location}`);
    });
    await link.click();
    // provider → edge callback (code exchanged, entry made) → /integrations/oauth?flow_id=… → the outcome
    await expect
      .poll(() => page.locator('.wizard [role="status"]').textContent(), { timeout: 15_000 })
      .toBe('OAuth Demo Cloud was added.');
    expect(hops).toEqual([expect.stringMatching(/^303 \/integrations\/oauth\?flow_id=[0-9a-f]{32}$/)]);
    expect(new URL(page.url()).pathname).toBe('/integrations');
    expect(page.url()).not.toContain('code=');
    expect(provider.exchanged).toEqual(['code-for-the-edge']);
    await page.locator('[data-entry]', { hasText: 'OAuth Demo Cloud' }).waitFor();
    await expectAccessible(page, 'edge integration oauth done (dark)');
    await shot(page, 'edge-integrations-oauth-done');

    // the same return page again (reload, back button): the ended flow still reads as it ended
    const flowId = hops[0]!.split('flow_id=')[1]!;
    await page.goto(`${base}/integrations/oauth?flow_id=${flowId}`);
    await expect.poll(() => page.locator('.wizard [role="status"]').textContent()).toBe('OAuth Demo Cloud was added.');
    // a flow that is not there: the API's words, and the way back
    await page.goto(`${base}/integrations/oauth?flow_id=0000`);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('flow not found');

    // the provider's redirect followed again (the flow is done, its state gone) or too late: the
    // edge sends the browser on with an error, and the portal says what to do instead of raw JSON
    hops.length = 0;
    await page.goto(`${base}/v1/config_flow/oauth/callback?code=code-for-the-edge&state=gone`);
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('The sign-in took too long or was already used; start the setup again from Integrations.');
    expect(hops).toEqual(['303 /integrations/oauth?error=unknown_state']);
    expect(new URL(page.url()).pathname).toBe('/integrations/oauth');
    expect(provider.exchanged).toEqual(['code-for-the-edge']);
    await expectAccessible(page, 'edge integration oauth expired (dark)');
    expect(problems).toEqual([]);
  }, 120_000);
});
