import { describe, expect, it } from 'vitest';
import { mediaClassFor, mimeTypeFor } from './mime.ts';
import { parseRange } from './range.ts';
import { buildMediaSourceUri, parseMediaSourceUri } from './uri.ts';

describe('parseMediaSourceUri', () => {
  it('parses root, provider roots and encoded segments', () => {
    expect(parseMediaSourceUri('media-source://')).toEqual({ provider: null, segments: [] });
    expect(parseMediaSourceUri('media-source://local')).toEqual({ provider: 'local', segments: [] });
    expect(parseMediaSourceUri('media-source://local/')).toEqual({ provider: 'local', segments: [] });
    expect(parseMediaSourceUri('media-source://local/music/A%20b%C3%BC.mp3')).toEqual({
      provider: 'local',
      segments: ['music', 'A bü.mp3'],
    });
    expect(parseMediaSourceUri('media-source://local/music/')).toEqual({ provider: 'local', segments: ['music'] });
  });
  it('round-trips with buildMediaSourceUri', () => {
    const segments = ['a b', 'c#d?e', '100%', 'ü'];
    expect(parseMediaSourceUri(buildMediaSourceUri('local', segments))).toEqual({ provider: 'local', segments });
  });
  it.each([
    'media-source://local/..',
    'media-source://local/../secret',
    'media-source://local/music/../../secret',
    'media-source://local/%2e%2e/secret',
    'media-source://local/%2E%2E',
    'media-source://local/.',
    'media-source://local/music%2f..%2f..%2fsecret',
    'media-source://local/..%5csecret',
    'media-source://local//etc/passwd',
    'media-source://local/music//x',
    'media-source://local/a%00b',
    'media-source://local/a\u0000b',
    'media-source://local/a\\b',
    'media-source://local/%zz',
    'media-source://local/a?b',
    'media-source://LOCAL/x',
    'media-source://lo.cal/x',
    'http://example.com/x.mp3',
    '/etc/passwd',
  ])('refuses %s with 400', (uri) => {
    expect(() => parseMediaSourceUri(uri)).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('parseRange', () => {
  it.each([
    [undefined, { kind: 'full' }],
    ['bytes=0-99', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=10-', { kind: 'partial', start: 10, end: 999 }],
    ['bytes=990-5000', { kind: 'partial', start: 990, end: 999 }],
    ['bytes=-100', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=-5000', { kind: 'partial', start: 0, end: 999 }],
    ['bytes=999-999', { kind: 'partial', start: 999, end: 999 }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=1000-', { kind: 'unsatisfiable' }],
    ['bytes=1000-2000', { kind: 'unsatisfiable' }],
    ['bytes=5-1', { kind: 'full' }],
    ['bytes=0-1,5-6', { kind: 'full' }],
    ['items=0-1', { kind: 'full' }],
    ['bytes=abc', { kind: 'full' }],
    ['bytes=-', { kind: 'full' }],
  ])('%s on 1000 bytes', (header, expected) => {
    expect(parseRange(header, 1000)).toEqual(expected);
  });
  it('nothing is satisfiable in an empty file', () => {
    expect(parseRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-1', 0)).toEqual({ kind: 'unsatisfiable' });
  });
});

describe('mime', () => {
  it('maps extensions to MIME types and media classes', () => {
    expect([mimeTypeFor('a.MP3'), mediaClassFor(mimeTypeFor('a.MP3'))]).toEqual(['audio/mpeg', 'music']);
    expect([mimeTypeFor('a.mkv'), mediaClassFor(mimeTypeFor('a.mkv'))]).toEqual(['video/x-matroska', 'video']);
    expect([mimeTypeFor('a.jpeg'), mediaClassFor(mimeTypeFor('a.jpeg'))]).toEqual(['image/jpeg', 'image']);
    expect([mimeTypeFor('a.pdf'), mediaClassFor(mimeTypeFor('a.pdf'))]).toEqual(['application/pdf', 'app']);
    expect(mimeTypeFor('noext')).toBe('application/octet-stream');
  });
});
