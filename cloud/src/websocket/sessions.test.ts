import { describe, expect, it } from 'vitest';
import { SessionRegistry, type SessionEnd } from './sessions.ts';

function handle() {
  const ended: SessionEnd[] = [];
  let changes = 0;
  return {
    ended,
    changes: () => changes,
    end: (why: SessionEnd) => ended.push(why),
    accessChanged: () => {
      changes++;
    },
  };
}

const REVOKED = { reason: 'token revoked', message: 'personal access token revoked' };

describe('SessionRegistry', () => {
  it('ends the sessions of a revoked credential of that user only, once', () => {
    const registry = new SessionRegistry();
    const [a1, a2, aOther, bSame] = [handle(), handle(), handle(), handle()];
    registry.add({ userId: 'a', credential: 'pat:1', expiresAt: null }, a1);
    registry.add({ userId: 'a', credential: 'pat:1', expiresAt: null }, a2);
    registry.add({ userId: 'a', credential: 'pat:2', expiresAt: null }, aOther);
    // A revocation names the user too: another user's session is never ended by it.
    registry.add({ userId: 'b', credential: 'pat:1', expiresAt: null }, bSame);
    expect(registry.revoke({ userId: 'a', credentials: ['pat:1'], ...REVOKED })).toBe(2);
    expect(a1.ended).toEqual([REVOKED]);
    expect(a2.ended).toEqual([REVOKED]);
    expect(aOther.ended).toEqual([]);
    expect(bSame.ended).toEqual([]);
    expect(registry.revoke({ userId: 'a', credentials: ['pat:1'], ...REVOKED })).toBe(0);
    expect(registry.size).toBe(2);
  });

  it("ends a session at its credential's expiry, by a timer", async () => {
    const registry = new SessionRegistry();
    const h = handle();
    const start = Date.now();
    registry.add({ userId: 'a', credential: 'session:f', expiresAt: start + 150 }, h);
    await new Promise((r) => setTimeout(r, 100));
    expect(h.ended).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    expect(h.ended).toEqual([{ reason: 'token expired', message: 'access token expired' }]);
    expect(registry.size).toBe(0);
  });

  it('ends at once a session whose credential has already expired', () => {
    const registry = new SessionRegistry();
    const h = handle();
    registry.add({ userId: 'a', credential: null, expiresAt: Date.now() - 1 }, h);
    expect(h.ended.map((e) => e.reason)).toEqual(['token expired']);
    expect(registry.size).toBe(0);
  });

  it('forgets an unregistered session: no expiry, no revocation, no notices', async () => {
    const registry = new SessionRegistry();
    const h = handle();
    const unregister = registry.add({ userId: 'a', credential: 'pat:1', expiresAt: Date.now() + 50 }, h);
    unregister();
    unregister();
    registry.accessChanged();
    expect(registry.revoke({ userId: 'a', credentials: ['pat:1'], ...REVOKED })).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(h.ended).toEqual([]);
    expect(h.changes()).toBe(0);
    expect(registry.size).toBe(0);
  });

  it('tells every open session that grants changed', () => {
    const registry = new SessionRegistry();
    const [a, b] = [handle(), handle()];
    registry.add({ userId: 'a', credential: 'pat:1', expiresAt: null }, a);
    registry.add({ userId: 'b', credential: null, expiresAt: Date.now() + 60_000 }, b);
    registry.accessChanged();
    expect([a.changes(), b.changes()]).toEqual([1, 1]);
  });
});
