import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
import type { Edge } from '@smarthome/edge/edge';
import { oauthProvider } from './oauth-provider.ts';
import { pairEdge, until, type Cleanups } from './support.ts';
import {
  BROWSER_SUITE,
  CHROMIUM,
  expectAccessible,
  launchBrowser,
  newPage,
  portalCloud,
  shot,
  signInAt,
  unwind,
} from './portal-support.ts';

/**
 * The Integrations page (config flows run on the paired edge through the cloud: a form with
 * field errors, an OAuth sign-in at a test provider and back) and the media-control card
 * (a test media player on the edge: its services, browsing the edge's media, play_media).
 */
const PLAYER = 'media_player.kitchen';

/** A media player on the edge answering media_player services like a real one; the calls it got. */
function testPlayer(edge: Edge): Array<{ service: string; data: Record<string, unknown> }> {
  const calls: Array<{ service: string; data: Record<string, unknown> }> = [];
  edge.registry.upsertEntity({
    platform: 'test_player',
    unique_id: 'kitchen',
    domain: 'media_player',
    name: 'Kitchen speaker',
    suggested_object_id: 'kitchen',
  });
  const attrs: Record<string, unknown> = {
    friendly_name: 'Kitchen speaker',
    media_title: 'Morning',
    media_artist: 'Birds',
    volume_level: 0.4,
  };
  edge.states.set(PLAYER, 'paused', attrs);
  edge.services.registerPlatform({
    platform: 'test_player',
    supportedServices: (domain) =>
      domain === 'media_player' ? ['media_play', 'media_pause', 'media_next_track', 'volume_set', 'play_media'] : [],
    callService: async (_id, service, data) => {
      calls.push({ service, data });
      const now = edge.states.get(PLAYER)!;
      const next = { ...now.attributes };
      let state = now.state ?? 'idle';
      if (service === 'media_play') state = 'playing';
      if (service === 'media_pause') state = 'paused';
      if (service === 'volume_set') next.volume_level = data.volume_level;
      if (service === 'play_media') {
        state = 'playing';
        next.media_title = decodeURIComponent(String(data.media_content_id).split('/').pop() ?? '');
        next.media_artist = 'Local Media';
      }
      edge.states.set(PLAYER, state, next);
    },
  });
  return calls;
}

describe.skipIf(!CHROMIUM)(`portal integrations and media ${BROWSER_SUITE}`, () => {
  const cleanups: Cleanups = [];
  let cloud: TestCloud;
  let browser: Browser;
  let edge: Edge;
  let edgeId: number;
  let owner: { email: string; password: string; token: string };
  let provider: { url: string; exchanged: string[] };
  let player: Array<{ service: string; data: Record<string, unknown> }>;

  beforeAll(async () => {
    cloud = await portalCloud(cleanups);
    owner = await cloud.user();
    provider = await oauthProvider(cleanups);
    ({ edge, id: edgeId } = await pairEdge(cloud, cleanups, owner.token, 'Flat', undefined, {
      oauth: {
        clientId: 'portal-test',
        clientSecret: 'shh',
        authorizeUrl: `${provider.url}/authorize`,
        tokenUrl: `${provider.url}/token`,
        // the provider sends the browser back to the portal, which finishes the flow
        redirectUri: `${cloud.url}/integrations/oauth`,
      },
    }));
    fs.mkdirSync(path.join(edge.config.dataDir, 'media', 'albums'), { recursive: true });
    fs.writeFileSync(path.join(edge.config.dataDir, 'media', 'albums', 'song.mp3'), Buffer.alloc(4000, 7));
    player = testPlayer(edge);
    await until(
      async () => (await cloud.get(`/v1/entities/states/${PLAYER}`, { token: owner.token })).body?.state === 'paused',
      10_000,
      'the mirrored player',
    );
    const dash = await cloud.put('/v1/ui-dashboard', {
      token: owner.token,
      body: {
        name: 'home',
        title: 'Flat',
        config: { views: [{ title: 'Music', cards: [{ type: 'media-control', entity: PLAYER }] }] },
      },
    });
    expect(dash.status).toBe(200);
    browser = await launchBrowser(cleanups);
  }, 120_000);
  afterAll(() => unwind(cleanups));

  async function signIn(page: Page): Promise<void> {
    await signInAt(page, cloud, owner.email, owner.password);
    await page.getByRole('heading', { name: 'Flat', exact: true }).waitFor();
  }

  const entries = async () =>
    (await cloud.get('/v1/config_entries', { token: owner.token })).body as Array<{ id: number; title: string }>;

  it('MQTT: a form of text, number and password fields, its field errors, the entry created, then removed', async () => {
    const { page, problems } = await newPage(browser);
    await signIn(page);
    await page.getByRole('link', { name: 'Integrations' }).click();
    await page.getByRole('heading', { name: 'Integrations' }).waitFor();
    await expect
      .poll(() => page.locator('[data-handler]').evaluateAll((els) => els.map((e) => e.getAttribute('data-handler'))))
      .toEqual(['demo', 'mqtt', 'oauth_demo_cloud']);
    await page.getByRole('button', { name: 'Add MQTT' }).click();
    await page.getByRole('heading', { name: 'Set up MQTT' }).waitFor();
    // the data_schema as controls: required marker, default, description, a password input
    const host = page.getByRole('textbox', { name: 'Host' });
    expect(await host.getAttribute('required')).not.toBeNull();
    expect(await page.getByRole('spinbutton', { name: 'Port' }).inputValue()).toBe('1883');
    expect(await page.getByLabel('Password').getAttribute('type')).toBe('password');
    await expect
      .poll(() => page.locator('[data-field="host"] .note').textContent())
      .toBe('The broker’s host name or IP address');
    await host.fill('bad host!');
    await page.getByRole('spinbutton', { name: 'Port' }).fill('70000');
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => page.locator('[data-field="host"] .field-error').textContent()).toBe('invalid_host');
    expect(await page.locator('[data-field="port"] .field-error').textContent()).toBe('invalid_port');
    expect(await host.getAttribute('aria-invalid')).toBe('true');
    // the engine's own checks are worded too: a port that is not a whole number
    await page.getByRole('spinbutton', { name: 'Port' }).fill('1.5');
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect
      .poll(() => page.locator('[data-field="port"] .field-error').textContent())
      .toBe('Enter a whole number (invalid_integer).');
    await expectAccessible(page, 'integration form with errors');
    await shot(page, 'cloud-integrations-form-errors');

    const creds = await edge.createMqttCredentials({ role: 'device' });
    await host.fill('127.0.0.1');
    await page.getByRole('spinbutton', { name: 'Port' }).fill(String(edge.ports.mqtt));
    await page.getByLabel('Username').fill(creds.username);
    await page.getByLabel('Password').fill(creds.password);
    await page.getByRole('button', { name: 'Submit' }).click();
    const title = `MQTT 127.0.0.1:${edge.ports.mqtt}`;
    await expect.poll(() => page.locator('.wizard [role="status"]').textContent()).toBe(`${title} was added.`);
    const row = page.locator('[data-entry]', { hasText: title });
    await row.waitFor();
    expect((await entries()).map((e) => e.title)).toContain(title);
    await shot(page, 'cloud-integrations-created');
    await page.getByRole('button', { name: 'Close' }).click();

    await row.getByRole('button', { name: `Remove ${title}` }).click();
    await row.getByRole('button', { name: `Confirm remove ${title}` }).click();
    await expect.poll(() => page.locator('main p.ok').textContent()).toBe(`${title} was removed.`);
    await expect.poll(() => row.count()).toBe(0);
    expect((await entries()).map((e) => e.title)).not.toContain(title);
    expect(problems).toEqual([]);
  }, 120_000);

  it('OAuth: the provider’s sign-in and back to the portal, which finishes the flow with the code', async () => {
    const { page, problems } = await newPage(browser, { mobile: true, dark: true });
    await signIn(page);
    await page.goto(`${cloud.url}/integrations`);
    await page.getByRole('button', { name: 'Add OAuth Demo Cloud' }).click();
    const link = page.getByRole('link', { name: 'Sign in to OAuth Demo Cloud' });
    expect(new URL((await link.getAttribute('href'))!).origin).toBe(provider.url);
    await expectAccessible(page, 'integration oauth step (dark, phone)');
    await shot(page, 'cloud-integrations-oauth-step');
    await link.click();
    // provider → /integrations/oauth?code=…&state=… → the flow advanced → the entry
    await expect
      .poll(() => page.locator('.wizard [role="status"]').textContent(), { timeout: 15_000 })
      .toBe('OAuth Demo Cloud was added.');
    expect(new URL(page.url()).pathname).toBe('/integrations');
    expect(page.url()).not.toContain('code=');
    expect(provider.exchanged).toEqual(['code-for-the-edge']);
    await page.locator('[data-entry]', { hasText: 'OAuth Demo Cloud' }).waitFor();
    expect((await entries()).map((e) => e.title)).toContain('OAuth Demo Cloud');
    await shot(page, 'cloud-integrations-oauth-done');
    expect(problems).toEqual([]);
  }, 120_000);

  it('media-control: play/pause, next and volume call the player; browsing the edge and playing a file sends play_media', async () => {
    const { page, problems } = await newPage(browser);
    await signIn(page);
    const card = page.locator(`.media-control[data-entity="${PLAYER}"]`);
    await expect.poll(() => card.locator('.media-state').textContent()).toBe('paused');
    expect(await card.locator('.media-title').textContent()).toBe('Morning');
    expect(await card.locator('.media-artist').textContent()).toBe('Birds');
    await card.getByRole('button', { name: 'Play Kitchen speaker' }).click();
    await expect.poll(() => card.locator('.media-state').textContent()).toBe('playing');
    await card.getByRole('button', { name: 'Next track on Kitchen speaker' }).click();
    // the card's controls are disabled while a call is pending: a key pressed then is lost
    await until(() => player.some((c) => c.service === 'media_next_track'), 10_000, 'media_next_track');
    const volume = card.getByRole('slider', { name: 'Volume of Kitchen speaker' });
    await expect.poll(() => volume.isEnabled()).toBe(true);
    await volume.focus();
    await page.keyboard.press('ArrowRight');
    await until(() => player.some((c) => c.service === 'volume_set'), 10_000, 'volume_set');
    expect(player.map((c) => c.service).slice(0, 2)).toEqual(['media_play', 'media_next_track']);
    expect(player.find((c) => c.service === 'volume_set')!.data.volume_level).toBe(0.45);

    await card.getByRole('button', { name: 'Browse media for Kitchen speaker' }).click();
    await card.locator('[data-media]', { hasText: 'Local Media' }).getByRole('button', { name: /^Open/ }).click();
    await card.locator('[data-media]', { hasText: 'albums' }).getByRole('button', { name: /^Open/ }).click();
    await card.locator('[aria-current="location"]', { hasText: 'albums' }).waitFor();
    await expectAccessible(page, 'media-control card browsing');
    await shot(page, 'cloud-dashboard-media');
    await card.locator('[data-media]', { hasText: 'song.mp3' }).getByRole('button', { name: 'Play song.mp3' }).click();
    await until(() => player.some((c) => c.service === 'play_media'), 10_000, 'play_media');
    const play = player.find((c) => c.service === 'play_media')!.data;
    // resolved by the cloud to its proxy of the edge's signed URL, playable off the LAN
    expect(String(play.media_content_id).startsWith(`${cloud.url}/v1/edges/${edgeId}/media/`)).toBe(true);
    expect(play.media_content_type).toBe('audio/mpeg');
    expect([200, 206]).toContain((await fetch(String(play.media_content_id))).status);
    await expect.poll(() => card.locator('.media-title').textContent()).toBe('song.mp3');
    // going back up the path
    await card.getByRole('button', { name: 'Local Media' }).click();
    await card.locator('[aria-current="location"]', { hasText: 'Local Media' }).waitFor();
    expect(problems).toEqual([]);
  }, 120_000);
});
