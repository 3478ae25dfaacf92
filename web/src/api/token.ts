/** When a cloud access token is due for a refresh (the socket and the HTTP client both ask). */

/** A JWT's `exp` (the cloud's access tokens); null for anything else (the edge's `sht_…` tokens never expire). */
export function tokenExpiry(token: string): number | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const json = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown };
    return typeof json.exp === 'number' ? json.exp * 1000 : null;
  } catch {
    return null;
  }
}

/** Refresh a little early: the server ends a session at the token's expiry. */
const EXPIRY_MARGIN_MS = 30_000;
export const expired = (token: string) => {
  const exp = tokenExpiry(token);
  return exp !== null && exp - EXPIRY_MARGIN_MS <= Date.now();
};
