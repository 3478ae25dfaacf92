import type { z } from 'zod';
import { TokenResponse } from '@smarthome/protocol/auth';
import { portalKind, session } from './session.ts';
import { expired } from './token.ts';

/** An answer other than 2xx, worded as the API worded it ({message} or {error}). */
export class ApiError extends Error {
  readonly status: number;
  /** seconds to wait (429 Retry-After), else null */
  readonly retryAfter: number | null;
  constructor(status: number, message: string, retryAfter: number | null) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

export interface CallOptions<T> {
  body?: unknown;
  /** validates the answer (the protocol's schema) */
  schema?: z.ZodType<T>;
  /** send no bearer token */
  anonymous?: boolean;
  /** X-Organization-Id for this call (default: the session's scope; null: personal) */
  org?: string | null;
  /** extra request headers (e.g. X-Account-Verification: the password re-check) */
  headers?: Record<string, string>;
  /** the answer is text, not JSON (e.g. POST /api/template) */
  text?: boolean;
}

async function send(
  method: string,
  path: string,
  body: unknown,
  anonymous: boolean,
  org?: string | null,
  extra: Record<string, string> = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...extra, accept: 'application/json' };
  const s = anonymous ? null : session.get();
  if (s) headers.authorization = `Bearer ${s.access_token}`;
  const scope = org === undefined ? s?.org : org;
  if (s && scope) headers['x-organization-id'] = scope;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, 'The server cannot be reached. Check the connection and try again.', null);
  }
}

let refreshing: Promise<boolean> | null = null;

/** Cloud access tokens live 15 minutes: one refresh (rotating the refresh token) for everyone waiting. */
export function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const s = session.get();
    if (!s?.refresh_token || portalKind() !== 'cloud') return false;
    const res = await send(
      'POST',
      '/v1/auth/token',
      { grant_type: 'refresh_token', refresh_token: s.refresh_token },
      true,
    );
    if (!res.ok) return false;
    const tokens = TokenResponse.parse(await res.json());
    session.update({ access_token: tokens.access_token, refresh_token: tokens.refresh_token });
    return true;
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

async function errorOf(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { message?: unknown; error?: unknown };
    if (typeof body.message === 'string') message = body.message;
    else if (typeof body.error === 'string') message = body.error;
  } catch {
    /* not JSON: keep the status line */
  }
  const retry = Number(res.headers.get('retry-after'));
  return new ApiError(res.status, message, Number.isFinite(retry) && retry > 0 ? Math.ceil(retry) : null);
}

/**
 * One API call. A token known to be expired is refreshed before it is sent. A 401 retries once: with
 * the token another call's refresh stored meanwhile, else after a refresh of its own (each refresh
 * rotates the refresh token, so calls that fail together must not refresh one after another); a
 * second 401 signs out.
 */
export async function api<T = unknown>(method: string, path: string, opts: CallOptions<T> = {}): Promise<T> {
  const anonymous = opts.anonymous ?? false;
  const call = () => send(method, path, opts.body, anonymous, opts.org, opts.headers);
  const sentWith = anonymous ? undefined : session.get()?.access_token;
  if (sentWith && expired(sentWith)) await refresh();
  const tokenBefore = session.get()?.access_token;
  let res = await call();
  if (res.status === 401 && !anonymous && session.get()) {
    const replaced = session.get()?.access_token !== tokenBefore;
    if (replaced || (await refresh())) res = await call();
    if (res.status === 401) session.set(null);
  }
  if (!res.ok) throw await errorOf(res);
  const data: unknown = res.status === 204 ? null : opts.text ? await res.text() : await res.json();
  return opts.schema ? opts.schema.parse(data) : (data as T);
}

/** How an error reads on the page: the API's words, a wait for 429, and what an offline edge means. */
export function describe(err: unknown): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  if (err.status === 429)
    return `Too many attempts (${err.message}). Wait ${err.retryAfter ?? 'a few'} s and try again.`;
  if (err.message === 'edge_offline')
    return 'This home is offline: its edge is not connected to the cloud (edge_offline).';
  if (err.status === 403) return `Not allowed (${err.message}).`;
  return err.message;
}
