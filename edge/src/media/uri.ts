/**
 * media-source URIs: `media-source://<provider>/<seg>/<seg>…`, each path segment
 * percent-encoded (encodeURIComponent). Parsing is strict and never normalizes: any
 * `.`/`..` segment (raw or encoded), encoded or doubled slash, backslash, NUL, query or
 * fragment is a 400 — so a parsed path can only name something below the provider root.
 */
import { badRequest } from '@smarthome/protocol/server';

export const MEDIA_SOURCE_PREFIX = 'media-source://';
const PROVIDER = /^[a-z0-9_]{1,64}$/;

export interface MediaSourceLocation {
  /** null for the root listing of all providers */
  provider: string | null;
  segments: string[];
}

export const invalidPath = () => badRequest('invalid media path');

/** Checks one decoded path segment (also used on names read from disk and from tokens). */
export function isSafeSegment(s: string): boolean {
  return s.length > 0 && s.length <= 255 && s !== '.' && s !== '..' && !/[/\\\0]/.test(s);
}

export function parseMediaSourceUri(uri: string): MediaSourceLocation {
  if (!uri.startsWith(MEDIA_SOURCE_PREFIX)) throw badRequest('uri must start with media-source://');
  const rest = uri.slice(MEDIA_SOURCE_PREFIX.length);
  if (rest === '') return { provider: null, segments: [] };
  if (/[\\\0?#]/.test(rest)) throw invalidPath();
  const slash = rest.indexOf('/');
  const provider = slash === -1 ? rest : rest.slice(0, slash);
  if (!PROVIDER.test(provider)) throw badRequest('invalid media provider');
  let pathPart = slash === -1 ? '' : rest.slice(slash + 1);
  if (pathPart.endsWith('/')) pathPart = pathPart.slice(0, -1);
  if (pathPart === '') return { provider, segments: [] };
  const segments = pathPart.split('/').map((raw) => {
    let s: string;
    try {
      s = decodeURIComponent(raw);
    } catch {
      throw invalidPath();
    }
    if (!isSafeSegment(s)) throw invalidPath();
    return s;
  });
  return { provider, segments };
}

export function buildMediaSourceUri(provider: string | null, segments: readonly string[] = []): string {
  if (provider === null) return MEDIA_SOURCE_PREFIX;
  return MEDIA_SOURCE_PREFIX + [provider, ...segments.map(encodeURIComponent)].join('/');
}
