import type { CredentialsRevoked } from '../auth/service.ts';

/** What an open session was authenticated with (a Principal's fields). */
export interface SessionCredential {
  userId: string;
  /** what a revocation names ("pat:<id>", "session:<refresh family>"); null: nothing can name it */
  credential: string | null;
  /** ms since the epoch when the credential stops working; null: never (a PAT) */
  expiresAt: number | null;
}

/** Why a session ends: the close reason (code 4001), and the auth_invalid message sent first. */
export interface SessionEnd {
  reason: string;
  message: string;
}

export const TOKEN_EXPIRED: SessionEnd = { reason: 'token expired', message: 'access token expired' };

/** What the registry asks of an open session (a WebSocket handler implements it). */
export interface SessionHandle {
  /** The credential is no longer valid: tell the client why, close, stop serving it. */
  end(why: SessionEnd): void;
  /** Grants changed somewhere (a share, a membership, an edge): drop whatever was derived from them. */
  accessChanged(): void;
}

interface Entry {
  session: SessionCredential;
  handle: SessionHandle;
  timer: NodeJS.Timeout | null;
}

/** setTimeout's longest delay; a later expiry re-arms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The open, authenticated sessions of long-lived connections (the app WebSocket), by user and
 * credential. Ends them when their credential expires (a timer at its expiry, not the next
 * message) or is revoked (revoke(), called for revocations on this replica and the others),
 * and tells them when grants changed (accessChanged()). Kept apart from any one socket handler
 * so that every handler of long-lived sessions registers here.
 */
export class SessionRegistry {
  private readonly byUser = new Map<string, Map<string | null, Set<Entry>>>();

  /** Registers an authenticated session; the returned function unregisters it (idempotent). */
  add(session: SessionCredential, handle: SessionHandle): () => void {
    const entry: Entry = { session, handle, timer: null };
    let credentials = this.byUser.get(session.userId);
    if (!credentials) this.byUser.set(session.userId, (credentials = new Map()));
    let entries = credentials.get(session.credential);
    if (!entries) credentials.set(session.credential, (entries = new Set()));
    entries.add(entry);
    this.armExpiry(entry);
    return () => this.remove(entry);
  }

  private armExpiry(entry: Entry): void {
    const { expiresAt } = entry.session;
    if (expiresAt === null) return;
    const wait = expiresAt - Date.now();
    if (wait <= 0) {
      this.end(entry, TOKEN_EXPIRED);
      return;
    }
    entry.timer = setTimeout(
      () => {
        entry.timer = null;
        if (wait > MAX_TIMER_MS) this.armExpiry(entry);
        else this.end(entry, TOKEN_EXPIRED);
      },
      Math.min(wait, MAX_TIMER_MS),
    );
    entry.timer.unref();
  }

  /** Removes the entry and returns whether it was registered. */
  private remove(entry: Entry): boolean {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    const { userId, credential } = entry.session;
    const credentials = this.byUser.get(userId);
    const entries = credentials?.get(credential);
    if (!entries?.delete(entry)) return false;
    if (entries.size === 0) credentials!.delete(credential);
    if (credentials!.size === 0) this.byUser.delete(userId);
    return true;
  }

  private end(entry: Entry, why: SessionEnd): void {
    if (this.remove(entry)) entry.handle.end(why);
  }

  /** Ends the user's sessions opened with any of the revoked credentials; returns how many. */
  revoke(revoked: CredentialsRevoked): number {
    const credentials = this.byUser.get(revoked.userId);
    if (!credentials) return 0;
    const ending: Entry[] = [];
    for (const credential of revoked.credentials) ending.push(...(credentials.get(credential) ?? []));
    for (const entry of ending) this.end(entry, { reason: revoked.reason, message: revoked.message });
    return ending.length;
  }

  /** Some grant changed (on this replica or another): every session forgets what it derived. */
  accessChanged(): void {
    for (const credentials of this.byUser.values()) {
      for (const entries of credentials.values()) for (const entry of entries) entry.handle.accessChanged();
    }
  }

  /** Open sessions. */
  get size(): number {
    let n = 0;
    for (const credentials of this.byUser.values()) for (const entries of credentials.values()) n += entries.size;
    return n;
  }
}
