import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MediaSourceComponent } from './component.ts';
import { DemoMediaProvider } from './demo-provider.ts';
import { LocalMediaProvider } from './local-provider.ts';
import { mountMediaRoutes } from './routes.ts';
import { serveRoutes, type TestServer } from '../testing/server.ts';

const KEY = 'test-media-signing-key-0123456789abcdef';
const SONG = randomBytes(100_000);
const SECRET = Buffer.from('TOP SECRET outside the media folder');

let dir: string;
let media: string;
let server: TestServer;
let component: MediaSourceComponent;
let clock: number;

const browse = (uri?: string) =>
  server.json('GET', `/v1/media-source/browse${uri === undefined ? '' : `?uri=${encodeURIComponent(uri)}`}`);
const resolve = (uri: string) =>
  server.json('POST', '/v1/media-source/resolve', { uri, target_media_player: 'media_player.kitchen' });
const get = (url: string, headers: Record<string, string> = {}, method = 'GET') => fetch(url, { headers, method });
const bytes = async (res: Response) => Buffer.from(await res.arrayBuffer());

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edge-media-'));
  media = join(dir, 'media');
  mkdirSync(join(media, 'music', 'Album Ünï'), { recursive: true });
  mkdirSync(join(media, 'video'));
  mkdirSync(join(media, 'pictures'));
  mkdirSync(join(dir, 'secret'));
  writeFileSync(join(dir, 'secret', 'secret.mp3'), SECRET);
  writeFileSync(join(media, 'music', 'song.mp3'), SONG);
  writeFileSync(join(media, 'music', 'Album Ünï', 'track #1.flac'), Buffer.alloc(2048, 7));
  writeFileSync(join(media, 'video', 'clip.mp4'), Buffer.alloc(4096, 1));
  writeFileSync(join(media, 'pictures', 'cat.jpg'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]));
  writeFileSync(join(media, 'readme.txt'), 'hello');
  writeFileSync(join(media, 'empty.mp3'), '');
  writeFileSync(join(media, '.hidden.mp3'), 'hidden');
  symlinkSync(join(media, 'music'), join(media, 'favourites'));
  symlinkSync(join(dir, 'secret'), join(media, 'escape'));
  symlinkSync(join(dir, 'secret', 'secret.mp3'), join(media, 'escape.mp3'));
  symlinkSync('/etc/passwd', join(media, 'passwd.mp3'));

  clock = Date.UTC(2026, 10, 1, 12, 0, 0);
  component = new MediaSourceComponent({
    providers: [new LocalMediaProvider({ folder: media }), new DemoMediaProvider()],
    signingKey: KEY,
    now: () => clock,
  });
  await component.start();
  server = await serveRoutes({ user: 'u' }, (router) => mountMediaRoutes(router, { component }));
});

afterAll(async () => {
  await server.close();
  await component.stop();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  clock = Date.UTC(2026, 10, 1, 12, 0, 0);
});

describe('browse', () => {
  it('lists the providers at the root', async () => {
    const root = await browse();
    expect(root.status).toBe(200);
    expect(root.body).toMatchObject({
      title: 'Media Sources',
      media_content_id: 'media-source://',
      media_class: 'directory',
      can_expand: true,
      can_play: false,
    });
    expect(root.body.children.map((c: any) => [c.title, c.media_content_id, c.can_expand])).toEqual([
      ['Local Media', 'media-source://local', true],
      ['Demo Media', 'media-source://demo', true],
    ]);
    expect((await browse('media-source://')).body.children).toHaveLength(2);
  });

  it('lists the local folder: folders first, hidden files and links out of the folder left out', async () => {
    const res = await browse('media-source://local');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      title: 'Local Media',
      media_class: 'directory',
      can_expand: true,
      children_media_class: 'directory',
    });
    expect(
      res.body.children.map((c: any) => [c.title, c.media_class, c.media_content_type, c.can_expand, c.can_play]),
    ).toEqual([
      ['favourites', 'directory', '', true, false],
      ['music', 'directory', '', true, false],
      ['pictures', 'directory', '', true, false],
      ['video', 'directory', '', true, false],
      ['empty.mp3', 'music', 'audio/mpeg', false, true],
      ['readme.txt', 'app', 'text/plain', false, false],
    ]);
    expect(JSON.stringify(res.body)).not.toMatch(/escape|passwd|hidden/);
  });

  it('browses nested folders with encoded ids', async () => {
    const music = await browse('media-source://local/music');
    expect(music.body.children.map((c: any) => c.media_content_id)).toEqual([
      'media-source://local/music/Album%20%C3%9Cn%C3%AF',
      'media-source://local/music/song.mp3',
    ]);
    const album = await browse(music.body.children[0].media_content_id);
    expect(album.status).toBe(200);
    expect(album.body).toMatchObject({ title: 'Album Ünï', children_media_class: 'music' });
    expect(album.body.children).toEqual([
      {
        title: 'track #1.flac',
        media_class: 'music',
        media_content_type: 'audio/flac',
        media_content_id: 'media-source://local/music/Album%20%C3%9Cn%C3%AF/track%20%231.flac',
        thumbnail: null,
        children_media_class: null,
        can_play: true,
        can_expand: false,
        children: [],
      },
    ]);
    const viaLink = await browse('media-source://local/favourites/song.mp3');
    expect(viaLink.body).toMatchObject({ media_class: 'music', can_play: true });
    expect((await browse('media-source://local/video')).body.children[0]).toMatchObject({
      media_class: 'video',
      media_content_type: 'video/mp4',
    });
  });

  it('gives images a signed thumbnail URL that serves the image', async () => {
    const pics = await browse('media-source://local/pictures');
    const cat = pics.body.children[0];
    expect(cat).toMatchObject({ title: 'cat.jpg', media_class: 'image', can_play: true });
    expect(cat.thumbnail).toMatch(new RegExp(`^${server.url}/v1/media/[A-Za-z0-9_.-]+/cat\\.jpg$`));
    const res = await get(cat.thumbnail);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect([...(await bytes(res))]).toEqual([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
  });

  it('answers 404 for unknown providers and nodes, 400 for a uri that is not media-source', async () => {
    expect(await browse('media-source://nope/x')).toEqual({ status: 404, body: { message: 'unknown media provider' } });
    expect(await browse('media-source://local/music/missing.mp3')).toEqual({
      status: 404,
      body: { message: 'media not found' },
    });
    expect(await browse('media-source://demo/tones/none.wav')).toEqual({
      status: 404,
      body: { message: 'media not found' },
    });
    const bad = await browse('http://example.com/a.mp3');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/media-source/);
    expect((await resolve('file:///etc/passwd')).status).toBe(400);
    expect(await resolve('media-source://nope/a.mp3')).toEqual({
      status: 404,
      body: { message: 'unknown media provider' },
    });
    expect(await resolve('media-source://local/music')).toEqual({
      status: 400,
      body: { message: 'not a playable media item' },
    });
  });
});

describe('resolve and the signed URL', () => {
  it('resolves to a signed URL that expires in 5 minutes and streams the file', async () => {
    const r = await resolve('media-source://local/music/song.mp3');
    expect(r.status).toBe(200);
    expect(r.body.mime_type).toBe('audio/mpeg');
    expect(r.body.url).toMatch(
      new RegExp(`^${server.url}/v1/media/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+/song\\.mp3$`),
    );
    expect(r.body.extra).toEqual({
      title: 'song.mp3',
      size: SONG.length,
      expires_at: new Date(clock + 300_000).toISOString(),
    });
    const res = await get(r.body.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-length')).toBe(String(SONG.length));
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect((await bytes(res)).equals(SONG)).toBe(true);
  });

  it('serves byte ranges: 206 with exact bytes, open and suffix ranges, 416', async () => {
    const { body } = await resolve('media-source://local/music/song.mp3');
    const size = SONG.length;

    let res = await get(body.url, { Range: 'bytes=0-99' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 0-99/${size}`);
    expect(res.headers.get('content-length')).toBe('100');
    expect((await bytes(res)).equals(SONG.subarray(0, 100))).toBe(true);

    res = await get(body.url, { Range: 'bytes=54321-65432' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 54321-65432/${size}`);
    expect((await bytes(res)).equals(SONG.subarray(54321, 65433))).toBe(true);

    res = await get(body.url, { Range: 'bytes=99990-' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 99990-99999/${size}`);
    expect((await bytes(res)).equals(SONG.subarray(99990))).toBe(true);

    res = await get(body.url, { Range: 'bytes=-500' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${size - 500}-${size - 1}/${size}`);
    expect((await bytes(res)).equals(SONG.subarray(size - 500))).toBe(true);

    res = await get(body.url, { Range: 'bytes=99000-200000' });
    expect(res.status).toBe(206);
    expect((await bytes(res)).equals(SONG.subarray(99000))).toBe(true);

    for (const range of [`bytes=${size}-`, `bytes=${size + 10}-${size + 20}`, 'bytes=-0']) {
      res = await get(body.url, { Range: range });
      expect(res.status).toBe(416);
      expect(res.headers.get('content-range')).toBe(`bytes */${size}`);
      expect(await res.json()).toEqual({ error: 'range_not_satisfiable' });
    }

    // Multiple ranges are answered with the whole file; so is a stale If-Range.
    res = await get(body.url, { Range: 'bytes=0-1,5-6' });
    expect(res.status).toBe(200);
    expect((await bytes(res)).length).toBe(size);
    res = await get(body.url, { Range: 'bytes=0-9', 'If-Range': '"stale"' });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const etag = (await get(body.url, { Range: 'bytes=0-0' })).headers.get('etag')!;
    res = await get(body.url, { Range: 'bytes=0-9', 'If-Range': etag });
    expect(res.status).toBe(206);
    expect((await bytes(res)).equals(SONG.subarray(0, 10))).toBe(true);
  });

  it('answers HEAD with headers only and serves empty files', async () => {
    const { body } = await resolve('media-source://local/music/song.mp3');
    const head = await get(body.url, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(SONG.length));
    expect((await bytes(head)).length).toBe(0);
    const empty = await resolve('media-source://local/empty.mp3');
    const res = await get(empty.body.url);
    expect(res.status).toBe(200);
    expect((await bytes(res)).length).toBe(0);
    expect((await get(empty.body.url, { Range: 'bytes=0-' })).status).toBe(416);
  });

  it('refuses an expired signature with 403', async () => {
    const { body } = await resolve('media-source://local/music/song.mp3');
    clock += 299_000;
    expect((await get(body.url, { Range: 'bytes=0-0' })).status).toBe(206);
    clock += 2_000;
    const res = await get(body.url);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'signature_expired' });
  });

  it('refuses tampered, foreign-key and unsigned tokens with 403', async () => {
    const { body } = await resolve('media-source://local/music/song.mp3');
    const url = new URL(body.url);
    const [, , , token, filename] = url.pathname.split('/');
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    expect(claims).toMatchObject({ prv: 'local', pth: ['music', 'song.mp3'], aud: 'smarthome-edge-media' });
    expect(claims.exp - claims.iat).toBe(300);

    const forged = Buffer.from(JSON.stringify({ ...claims, pth: ['..', 'secret', 'secret.mp3'] })).toString(
      'base64url',
    );
    const flipped = s.slice(0, 5) + (s[5] === 'A' ? 'B' : 'A') + s.slice(6);
    const otherKey = await new SignJWT({ prv: 'local', pth: ['music', 'song.mp3'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience('smarthome-edge-media')
      .setIssuedAt(clock / 1000)
      .setExpirationTime(clock / 1000 + 300)
      .sign(new TextEncoder().encode('another-key-another-key-another-key!!'));
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`;
    for (const t of [`${h}.${forged}.${s}`, `${h}.${p}.${flipped}`, otherKey, none, 'garbage']) {
      const res = await get(`${url.origin}/v1/media/${t}/${filename}`);
      expect(res.status, t).toBe(403);
      expect(await res.json()).toEqual({ error: 'invalid_signature' });
    }
    // A valid token under another file name is not a way to rename content.
    expect((await get(`${url.origin}/v1/media/${token}/other.mp3`)).status).toBe(404);
  });
});

describe('path traversal', () => {
  const attempts = [
    'media-source://local/../secret/secret.mp3',
    'media-source://local/music/../../secret/secret.mp3',
    'media-source://local/%2e%2e/secret/secret.mp3',
    'media-source://local/%2E%2E%2Fsecret%2Fsecret.mp3',
    'media-source://local/music%2f..%2f..%2fsecret%2fsecret.mp3',
    'media-source://local/..%5Csecret%5Csecret.mp3',
    'media-source://local//etc/passwd',
    'media-source://local/music/song.mp3%00.txt',
  ];
  it.each(attempts)('refuses %s with 400 in browse and resolve', async (uri) => {
    const b = await browse(uri);
    expect(b).toEqual({ status: 400, body: { message: 'invalid media path' } });
    expect(await resolve(uri)).toEqual({ status: 400, body: { message: 'invalid media path' } });
  });

  it.each([
    'media-source://local/escape',
    'media-source://local/escape/secret.mp3',
    'media-source://local/escape.mp3',
    'media-source://local/passwd.mp3',
  ])('treats symlinks out of the folder as missing: %s', async (uri) => {
    expect(await browse(uri)).toEqual({ status: 404, body: { message: 'media not found' } });
    expect(await resolve(uri)).toEqual({ status: 404, body: { message: 'media not found' } });
  });

  it('re-checks at serve time: a file swapped for a link out of the folder is not served', async () => {
    const file = join(media, 'music', 'swap.mp3');
    writeFileSync(file, 'legit');
    const { body } = await resolve('media-source://local/music/swap.mp3');
    unlinkSync(file);
    symlinkSync(join(dir, 'secret', 'secret.mp3'), file);
    const res = await get(body.url);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('SECRET');
    unlinkSync(file);
  });

  it('does not route raw traversal on the signed URL path', async () => {
    for (const path of [
      '/v1/media/../../secret/secret.mp3',
      '/v1/media/%2e%2e/%2e%2e%2fsecret%2fsecret.mp3',
      '/v1/media/x/..%2f..%2fsecret.mp3',
    ]) {
      const res = await get(server.url + path);
      expect([403, 404]).toContain(res.status);
      expect(await res.text()).not.toContain('SECRET');
    }
  });
});

describe('demo provider', () => {
  it('browses and resolves generated media', async () => {
    const root = await browse('media-source://demo');
    expect(root.body.children.map((c: any) => [c.title, c.media_content_id, c.children_media_class])).toEqual([
      ['Tones', 'media-source://demo/tones', 'music'],
      ['Images', 'media-source://demo/images', 'image'],
    ]);
    const tones = await browse('media-source://demo/tones');
    expect(tones.body.children.map((c: any) => [c.title, c.media_class, c.media_content_type, c.can_play])).toEqual([
      ['A4 (440 Hz)', 'music', 'audio/wav', true],
      ['C5 (523 Hz)', 'music', 'audio/wav', true],
    ]);
    const r = await resolve('media-source://demo/tones/a4-440hz.wav');
    expect(r.body).toMatchObject({ mime_type: 'audio/wav', extra: { title: 'A4 (440 Hz)', size: 16044 } });
    const head = await get(r.body.url, { Range: 'bytes=0-11' });
    expect(head.status).toBe(206);
    const first = await bytes(head);
    expect(first.length).toBe(12);
    expect(first.toString('ascii', 0, 4)).toBe('RIFF');
    expect(first.readUInt32LE(4)).toBe(16036);
    expect(first.toString('ascii', 8, 12)).toBe('WAVE');
    const whole = await bytes(await get(r.body.url));
    expect(whole.length).toBe(16044);
    expect(whole.readUInt32LE(24)).toBe(8000);
    const tail = await get(r.body.url, { Range: 'bytes=-4' });
    expect((await bytes(tail)).equals(whole.subarray(-4))).toBe(true);
  });
});
