/** Who is signed in, kept across reloads; and which server this page talks to. */

export type PortalKind = 'cloud' | 'edge';

/** Told by the server in a meta tag (the same build runs on the cloud and on every edge). */
export function portalKind(): PortalKind {
  const meta = document.querySelector('meta[name="smarthome-portal"]')?.getAttribute('content');
  return meta === 'edge' ? 'edge' : 'cloud';
}

export interface Session {
  access_token: string;
  /** cloud only: rotated on every refresh */
  refresh_token?: string;
  /** e-mail (cloud) or username (edge) */
  who: string;
  /** cloud: X-Organization-Id of the active scope; null = personal */
  org: string | null;
}

const KEY = 'smarthome.session';
const listeners = new Set<() => void>();

export const session = {
  get(): Session | null {
    try {
      const raw = localStorage.getItem(KEY);
      return raw ? (JSON.parse(raw) as Session) : null;
    } catch {
      return null;
    }
  },
  set(s: Session | null): void {
    if (s) localStorage.setItem(KEY, JSON.stringify(s));
    else localStorage.removeItem(KEY);
    for (const l of listeners) l();
  },
  update(patch: Partial<Session>): void {
    const s = session.get();
    if (s) session.set({ ...s, ...patch });
  },
  subscribe(fn: () => void): () => void {
    listeners.add(fn);
    return () => listeners.delete(fn);
  },
};
