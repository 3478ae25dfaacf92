import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestCloud } from '@smarthome/cloud/testing/harness';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';

/** Media and voice-assistant endpoints through the cloud, against a real paired edge. */
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function paired() {
  const cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  const owner = await cloud.user();
  const created = await cloud.post('/v1/edges', { token: owner.token, body: { name: 'Home' } });
  const data = tempDir();
  cleanups.push(data.cleanup);
  const song = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
  fs.mkdirSync(path.join(data.dir, 'media', 'albums'), { recursive: true });
  fs.writeFileSync(path.join(data.dir, 'media', 'albums', 'song.mp3'), song);
  const edge = await startEdge(data.dir, { cloudUrl: cloud.url, token: created.body.token });
  cleanups.push(() => edge.stop());
  const end = Date.now() + 10_000;
  while ((await cloud.get('/v1/edges', { token: owner.token })).body[0]?.status !== 'online') {
    if (Date.now() > end) throw new Error('edge never came online');
    await new Promise((r) => setTimeout(r, 25));
  }
  return { cloud, owner, edge, edgeId: created.body.edge.id as number, song };
}

describe('media through the cloud', () => {
  it('browses the edge, resolves to a cloud URL an app can play, and serves Range requests through the tunnel', async () => {
    const { cloud, owner, edgeId, song } = await paired();
    const root = await cloud.get('/v1/media-source/browse', { token: owner.token });
    expect(root.status).toBe(200);
    const local = root.body.children.find((c: { media_content_id: string }) =>
      c.media_content_id.startsWith('media-source://local'),
    );
    expect(local).toBeDefined();
    const folder = await cloud.get(`/v1/media-source/browse?uri=${encodeURIComponent(local.media_content_id)}`, {
      token: owner.token,
    });
    const albums = folder.body.children.find((c: { title: string }) => c.title === 'albums');
    expect(albums.can_expand).toBe(true);
    const inside = await cloud.get(
      `/v1/media-source/browse?uri=${encodeURIComponent(albums.media_content_id)}&target_media_player=media_player.kitchen`,
      { token: owner.token },
    );
    const track = inside.body.children.find((c: { title: string }) => c.title === 'song.mp3');
    expect(track).toMatchObject({ can_play: true, media_class: 'music' });

    const resolved = await cloud.post('/v1/media-source/resolve', {
      token: owner.token,
      body: { uri: track.media_content_id, target_media_player: 'media_player.kitchen' },
    });
    expect(resolved.status).toBe(200);
    expect(resolved.body.mime_type).toBe('audio/mpeg');
    expect(resolved.body.url.startsWith(`${cloud.url}/v1/edges/${edgeId}/media/`)).toBe(true);

    // The URL needs no bearer token (its signature is the authorization) and supports Range.
    const part = await fetch(resolved.body.url, { headers: { range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-19/${song.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(song.subarray(10, 20));
    const whole = await fetch(resolved.body.url);
    expect([200, 206]).toContain(whole.status);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(song);

    const tampered = resolved.body.url.replace(
      /\/media\/([^/]+)\//,
      (_m: string, t: string) => `/media/${t.slice(0, -2)}xx/`,
    );
    expect((await fetch(tampered)).status).toBe(403);
  });

  it('answers 400 for a uri that is not media-source://, 404 for an unknown node, 401 without auth', async () => {
    const { cloud, owner } = await paired();
    const bad = await cloud.get(`/v1/media-source/browse?uri=${encodeURIComponent('http://example.com/x')}`, {
      token: owner.token,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/media-source/);
    const badResolve = await cloud.post('/v1/media-source/resolve', {
      token: owner.token,
      body: { uri: 'file:///etc/passwd' },
    });
    expect(badResolve.status).toBe(400);
    const missing = await cloud.get(`/v1/media-source/browse?uri=${encodeURIComponent('media-source://local/nope')}`, {
      token: owner.token,
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: expect.any(String) });
    expect((await cloud.get('/v1/media-source/browse')).status).toBe(401);
  });
});

describe('voice assistant endpoints', () => {
  it('lists entities with state and exposure from the mirror, and remembers exposure per user', async () => {
    const { cloud, owner, edge } = await paired();
    for (const [domain, name] of [
      ['light', 'Porch'],
      ['sensor', 'Temp'],
    ]) {
      edge.registry.upsertEntity({
        platform: 'test',
        unique_id: name,
        domain,
        name,
        suggested_object_id: name.toLowerCase(),
      });
    }
    edge.states.set('light.porch', 'on', { friendly_name: 'Porch' });
    edge.states.set('sensor.temp', '21', { unit_of_measurement: '°C' });
    const list = await (async () => {
      const end = Date.now() + 10_000;
      for (;;) {
        const res = await cloud.get('/v1/voice-assistant/endpoints', { token: owner.token });
        // the registry records and the states arrive as separate deltas
        if (res.body.length === 2 && res.body.every((e: { state: string | null }) => e.state !== null)) return res.body;
        if (Date.now() > end) throw new Error(`endpoints: ${res.text}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const porch = list.find((e: { entity_id: string }) => e.entity_id === 'light.porch');
    expect(porch).toMatchObject({ entity_id: 'light.porch', domain: 'light', state: 'on', exposed: true });
    expect(list.find((e: { entity_id: string }) => e.entity_id === 'sensor.temp').exposed).toBe(false);
    const hide = await cloud.put('/v1/voice-assistant/endpoints/light.porch', {
      token: owner.token,
      body: { exposed: false },
    });
    expect(hide.status).toBe(200);
    expect(hide.body).toMatchObject({ entity_id: 'light.porch', exposed: false });
    const after = await cloud.get('/v1/voice-assistant/endpoints', { token: owner.token });
    expect(after.body.find((e: { entity_id: string }) => e.entity_id === 'light.porch').exposed).toBe(false);
    expect(
      (await cloud.put('/v1/voice-assistant/endpoints/light.porch', { token: owner.token, body: { exposed: 'yes' } }))
        .status,
    ).toBe(400);
    const stranger = await cloud.user();
    expect((await cloud.get('/v1/voice-assistant/endpoints', { token: stranger.token })).body).toEqual([]);
    expect(
      (await cloud.put('/v1/voice-assistant/endpoints/light.porch', { token: stranger.token, body: { exposed: true } }))
        .status,
    ).toBe(404);
  });
});
