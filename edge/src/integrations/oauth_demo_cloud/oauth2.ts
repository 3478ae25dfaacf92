/** OAuth 2.0 authorization-code helpers (RFC 6749 §4.1): authorize URL and token exchange. */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readStreamLimited } from '@smarthome/protocol/server';

export interface OAuth2ClientConfig {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  redirectUri: string;
  scope?: string;
  /** token request timeout (default 10 s) */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface OAuth2Token {
  access_token: string;
  token_type: string;
  refresh_token?: string;
  expires_in?: number;
  /** seconds since the epoch, computed from expires_in */
  expires_at?: number;
  scope?: string;
}

/** Why a token request failed; used as the flow's abort reason. */
export type TokenFailure = 'oauth_error' | 'oauth_timeout' | 'cannot_connect';

export class TokenRequestError extends Error {
  readonly reason: TokenFailure;
  /** the `error` field of an RFC 6749 §5.2 answer, when there was one */
  readonly oauthError: string | undefined;
  constructor(reason: TokenFailure, message: string, oauthError?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TokenRequestError';
    this.reason = reason;
    this.oauthError = oauthError;
  }
}

export const newState = () => randomBytes(24).toString('base64url');

export function statesMatch(expected: string, got: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(got);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function buildAuthorizeUrl(cfg: OAuth2ClientConfig, state: string): string {
  const url = new URL(cfg.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', cfg.clientId);
  url.searchParams.set('redirect_uri', cfg.redirectUri);
  url.searchParams.set('state', state);
  if (cfg.scope) url.searchParams.set('scope', cfg.scope);
  return url.toString();
}

const MAX_TOKEN_RESPONSE = 64 * 1024;

async function readLimited(res: Response): Promise<string> {
  const bytes = await readStreamLimited(res.body, MAX_TOKEN_RESPONSE);
  if (bytes === null) throw new TokenRequestError('oauth_error', 'token response too large');
  return Buffer.from(bytes).toString('utf8');
}

/** POSTs a grant to the token endpoint (form-encoded, client credentials in the body). */
export async function requestToken(
  cfg: OAuth2ClientConfig,
  grant: Record<string, string>,
  nowMs = Date.now(),
): Promise<OAuth2Token> {
  const body = new URLSearchParams({ ...grant, client_id: cfg.clientId, client_secret: cfg.clientSecret });
  const doFetch = cfg.fetch ?? fetch;
  let res: Response;
  let text: string;
  try {
    res = await doFetch(cfg.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body.toString(),
      // Never re-send the client secret to wherever a redirect points.
      redirect: 'manual',
      signal: AbortSignal.timeout(cfg.timeoutMs ?? 10_000),
    });
    text = await readLimited(res);
  } catch (err) {
    if (err instanceof TokenRequestError) throw err;
    const name = (err as Error)?.name;
    if (name === 'TimeoutError' || name === 'AbortError')
      throw new TokenRequestError('oauth_timeout', 'token endpoint timed out', undefined, { cause: err });
    throw new TokenRequestError('cannot_connect', 'token endpoint unreachable', undefined, { cause: err });
  }
  let json: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
  } catch {
    // handled below
  }
  if (res.status < 200 || res.status >= 300) {
    const code = typeof json.error === 'string' ? json.error : undefined;
    throw new TokenRequestError(
      'oauth_error',
      `token endpoint answered ${res.status}${code ? ` (${code})` : ''}`,
      code,
    );
  }
  if (typeof json.access_token !== 'string' || json.access_token === '')
    throw new TokenRequestError('oauth_error', 'token response without access_token');
  const tokenType = typeof json.token_type === 'string' ? json.token_type : 'Bearer';
  if (tokenType.toLowerCase() !== 'bearer')
    throw new TokenRequestError('oauth_error', `unsupported token_type ${tokenType}`);
  const token: OAuth2Token = { access_token: json.access_token, token_type: tokenType };
  if (typeof json.refresh_token === 'string') token.refresh_token = json.refresh_token;
  if (typeof json.scope === 'string') token.scope = json.scope;
  const expiresIn = typeof json.expires_in === 'string' ? Number(json.expires_in) : json.expires_in;
  if (typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0) {
    token.expires_in = expiresIn;
    token.expires_at = Math.floor(nowMs / 1000) + Math.floor(expiresIn);
  }
  return token;
}

export function exchangeCode(cfg: OAuth2ClientConfig, code: string, nowMs?: number): Promise<OAuth2Token> {
  return requestToken(cfg, { grant_type: 'authorization_code', code, redirect_uri: cfg.redirectUri }, nowMs);
}

export function refreshToken(cfg: OAuth2ClientConfig, refresh: string, nowMs?: number): Promise<OAuth2Token> {
  return requestToken(cfg, { grant_type: 'refresh_token', refresh_token: refresh }, nowMs);
}
