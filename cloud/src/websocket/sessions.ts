/** What an open session was authenticated with. */
export interface SessionCredential {
  userId: string;
}

/** What the registry asks of an open session (a WebSocket handler implements it). */
export interface SessionHandle {
  /** Grants changed somewhere (a share, a membership, an edge): drop whatever was derived from them. */
  accessChanged(): void;
}

interface Entry { credential: SessionCredential; handle: SessionHandle }

/**
 * The open, authenticated sessions of long-lived connections (the app WebSocket), by user:
 * tells them when grants changed (accessChanged()). Kept apart from any one socket handler
 * so that every handler of long-lived sessions registers here.
 */
export class SessionRegistry {
  private readonly byUser = new Map<string, Set<Entry>>();

  /** Registers an authenticated session; the returned function unregisters it (idempotent). */
  add(credential: SessionCredential, handle: SessionHandle): () => void {
    const entry: Entry = { credential, handle };
    let sessions = this.byUser.get(credential.userId);
    if (!sessions) this.byUser.set(credential.userId, sessions = new Set());
    sessions.add(entry);
    return () => this.remove(entry);
  }

  private remove(entry: Entry): void {
    const sessions = this.byUser.get(entry.credential.userId);
    if (!sessions?.delete(entry)) return;
    if (sessions.size === 0) this.byUser.delete(entry.credential.userId);
  }

  /** Some grant changed (on this replica or another): every session forgets what it derived. */
  accessChanged(): void {
    for (const sessions of this.byUser.values()) for (const entry of sessions) entry.handle.accessChanged();
  }

  /** Open sessions. */
  get size(): number {
    let n = 0;
    for (const sessions of this.byUser.values()) n += sessions.size;
    return n;
  }
}
