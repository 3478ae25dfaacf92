/** Who a request acts for, and the credential names revocations use (shared by the auth modules and their callers). */
export type Principal = {
  userId: string;
  via: 'jwt' | 'pat';
  tokenId?: string;
  /** what a revocation names (see CredentialsRevoked); null: nothing revokes it before it expires */
  credential: string | null;
  /** ms since the epoch when it stops working; null: never (a PAT, until revoked) */
  expiresAt: number | null;
};

/**
 * Credentials that stopped working before their time: whatever stays open on them (app
 * sockets) must end. A credential is "pat:<id>" for a personal access token, "session:<id>"
 * for the access tokens of a sign-in session (a refresh-token family).
 */
export interface CredentialsRevoked {
  userId: string;
  credentials: string[];
  /** a short close reason ("token revoked") and what the client is told */
  reason: string;
  message: string;
}

/** Who opened a sign-in session: shown in the session list. */
export interface SessionClient {
  userAgent: string | null;
  address: string;
}

export const patCredential = (id: string) => `pat:${id}`;
export const sessionCredential = (familyId: string) => `session:${familyId}`;
