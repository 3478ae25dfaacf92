import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { HttpError } from '@smarthome/protocol/server';
import {
  createTestPki,
  rawJws,
  signJws,
  signNotification,
  TEST_BUNDLE_ID,
  type NotificationSpec,
  type TestPki,
} from '../testing/app-store-pki.ts';
import { createStoreVerifier, type StoreVerifier } from './verify.ts';
import { handleStoreNotification, InMemoryIapRepository, type StoreNotificationDeps } from './store.ts';

const DAY = 86_400_000;
const MONTHLY = 'com.example.smarthome.pro.monthly';
const BUSINESS = 'com.example.smarthome.business.monthly';
const TOKEN = '6f1c1f47-58b2-4b3a-9c2e-0d7b8f6a9e11';
const plans = { [MONTHLY]: 2, [BUSINESS]: 3 };

let pki: TestPki;
let verifier: StoreVerifier;
beforeAll(() => {
  pki = createTestPki();
  verifier = createStoreVerifier({ roots: [pki.root.pem], bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' });
});

function setup() {
  const repo = new InMemoryIapRepository();
  repo.usersByToken.set(TOKEN, 'user-1');
  let n = 0;
  const deps: StoreNotificationDeps = { verifier, repo, planByProductId: plans, newId: () => `sub-${++n}` };
  return { repo, deps };
}

let signedDate = Date.now() - 60_000;
const spec = (
  notificationType: string,
  overrides: Partial<NotificationSpec> & { productId?: string; expiresDate?: number } = {},
): NotificationSpec => ({
  notificationType,
  signedDate: ++signedDate,
  transaction: {
    originalTransactionId: '2000',
    productId: overrides.productId ?? MONTHLY,
    appAccountToken: TOKEN,
    expiresDate: overrides.expiresDate ?? Date.now() + 30 * DAY,
  },
  renewal: { originalTransactionId: '2000', autoRenewStatus: 1, autoRenewProductId: overrides.productId ?? MONTHLY },
  ...overrides,
});

async function expect400(promise: Promise<unknown>, error: RegExp | string) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HttpError);
  expect((err as HttpError).status).toBe(400);
  const body = (err as HttpError).body();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatch(error);
}

describe('store-iap handleStoreNotification', () => {
  it('applies a subscription to the user of the appAccountToken', async () => {
    const { repo, deps } = setup();
    const result = await handleStoreNotification(
      { signedPayload: await signNotification(pki, spec('SUBSCRIBED', { subtype: 'INITIAL_BUY' })) },
      deps,
    );
    expect(result).toMatchObject({ status: true, message: 'applied', outcome: 'applied' });
    expect(repo.subscriptionsOfUser('user-1')).toEqual([
      expect.objectContaining({
        id: 'sub-1',
        plan_id: 2,
        status: 'active',
        gateway_provider: 'app_store',
        original_transaction_id: '2000',
      }),
    ]);
    expect(repo.notifications).toEqual([
      expect.objectContaining({ type: 'SUBSCRIBED', subtype: 'INITIAL_BUY', outcome: 'applied' }),
    ]);
  });

  it('walks a subscription through its lifecycle', async () => {
    const { repo, deps } = setup();
    const send = async (s: NotificationSpec) =>
      handleStoreNotification({ signedPayload: await signNotification(pki, s) }, deps);
    const status = () => repo.subscriptions.get('2000')!;
    await send(spec('SUBSCRIBED'));
    await send(spec('DID_CHANGE_RENEWAL_PREF', { subtype: 'UPGRADE', productId: BUSINESS }));
    expect(status()).toMatchObject({ plan_id: 3, status: 'active' });
    await send(
      spec('DID_CHANGE_RENEWAL_STATUS', {
        subtype: 'AUTO_RENEW_DISABLED',
        renewal: { originalTransactionId: '2000', autoRenewStatus: 0 },
        productId: BUSINESS,
      }),
    );
    expect(status().auto_renew).toBe(false);
    await send(
      spec('DID_FAIL_TO_RENEW', {
        subtype: 'GRACE_PERIOD',
        productId: BUSINESS,
        renewal: { originalTransactionId: '2000', gracePeriodExpiresDate: Date.now() + 6 * DAY },
      }),
    );
    expect(status().status).toBe('grace_period');
    await send(spec('GRACE_PERIOD_EXPIRED', { productId: BUSINESS }));
    expect(status().status).toBe('expired');
    await send(spec('DID_RENEW', { productId: BUSINESS, expiresDate: Date.now() + 31 * DAY }));
    expect(status().status).toBe('active');
    await send(spec('REFUND', { productId: BUSINESS }));
    expect(status().status).toBe('revoked');
    await send(spec('REFUND_REVERSED', { productId: BUSINESS }));
    expect(status().status).toBe('active');
    await send(spec('EXPIRED', { subtype: 'VOLUNTARY', productId: BUSINESS }));
    expect(status().status).toBe('expired');
    expect(repo.subscriptions.size).toBe(1);
    expect(repo.notifications.map((n) => n.outcome)).toEqual(Array(9).fill('applied'));
  });

  it('answers a replay with success and changes nothing', async () => {
    const { repo, deps } = setup();
    const subscribed = await signNotification(pki, spec('SUBSCRIBED'));
    await handleStoreNotification({ signedPayload: subscribed }, deps);
    await handleStoreNotification({ signedPayload: await signNotification(pki, spec('REFUND')) }, deps);
    const before = structuredClone(repo.subscriptions.get('2000'));
    const replay = await handleStoreNotification({ signedPayload: subscribed }, deps);
    expect(replay).toMatchObject({ status: true, message: 'already processed', outcome: 'duplicate' });
    expect(repo.subscriptions.get('2000')).toEqual(before);
    expect(repo.subscriptions.get('2000')!.status).toBe('revoked');
    expect(repo.notifications).toHaveLength(2);
  });

  it('applies each notificationUUID once even when delivered concurrently', async () => {
    const { repo, deps } = setup();
    const jws = await signNotification(pki, spec('SUBSCRIBED'));
    const results = await Promise.all([1, 2, 3].map(() => handleStoreNotification({ signedPayload: jws }, deps)));
    expect(results.map((r) => r.outcome).sort()).toEqual(['applied', 'duplicate', 'duplicate']);
    expect(repo.subscriptions.size).toBe(1);
  });

  it('a same-UUID signed notification with different content is still a replay', async () => {
    const { repo, deps } = setup();
    await handleStoreNotification(
      { signedPayload: await signNotification(pki, spec('SUBSCRIBED', { notificationUUID: 'fixed' })) },
      deps,
    );
    const again = await handleStoreNotification(
      { signedPayload: await signNotification(pki, spec('REFUND', { notificationUUID: 'fixed' })) },
      deps,
    );
    expect(again.outcome).toBe('duplicate');
    expect(repo.subscriptions.get('2000')!.status).toBe('active');
  });

  it('a forged notification cannot burn the UUID of the real one', async () => {
    const { repo, deps } = setup();
    const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const forged = await signJws(
      {
        notificationType: 'SUBSCRIBED',
        notificationUUID: 'real-uuid',
        signedDate: Date.now(),
        data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
      },
      pki,
      { key: forger.privateKey },
    );
    await expect400(handleStoreNotification({ signedPayload: forged }, deps), /bad_signature/);
    const real = await handleStoreNotification(
      { signedPayload: await signNotification(pki, spec('SUBSCRIBED', { notificationUUID: 'real-uuid' })) },
      deps,
    );
    expect(real.outcome).toBe('applied');
    expect(repo.subscriptions.size).toBe(1);
  });

  it('answers 400 {error} for a missing signedPayload', async () => {
    const { repo, deps } = setup();
    for (const body of [
      undefined,
      null,
      {},
      { signedPayload: '' },
      { signedPayload: 42 },
      'text',
      { signed_payload: 'a.b.c' },
    ]) {
      await expect400(handleStoreNotification(body, deps), 'missing signedPayload');
    }
    expect(repo.notifications).toHaveLength(0);
  });

  it('answers 400 {error} for every bad signature or chain, records it, and changes nothing', async () => {
    const { repo, deps } = setup();
    await handleStoreNotification({ signedPayload: await signNotification(pki, spec('SUBSCRIBED')) }, deps);
    const before = structuredClone(repo.subscriptions.get('2000'));
    const otherRoot = createTestPki({ rootName: 'Evil Root' });
    const noLeafMarker = createTestPki({ leafMarker: false });
    const past = { notBefore: new Date(Date.now() - 400 * DAY), notAfter: new Date(Date.now() - DAY) };
    const expired = createTestPki({ leafValidity: past });
    const refund = spec('REFUND');
    const refundPayload = JSON.parse(
      Buffer.from((await signNotification(pki, refund)).split('.')[1], 'base64url').toString(),
    );
    const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const bad: Array<[string, string]> = [
      ['forged', await signJws(refundPayload, pki, { key: forger.privateKey })],
      ['wrong root', await signNotification(otherRoot, refund)],
      ['leaf without OID', await signNotification(noLeafMarker, refund)],
      ['expired chain', await signNotification(expired, refund)],
      ['alg none', rawJws({ alg: 'none', x5c: pki.x5c }, refundPayload)],
      ['HS256', rawJws({ alg: 'HS256', x5c: pki.x5c }, refundPayload, 'c2ln')],
      ['truncated x5c', await signJws(refundPayload, pki, { x5c: pki.x5c.slice(0, 2) })],
      ['garbage', 'garbage'],
      ['wrong bundle', await signNotification(pki, { ...refund, bundleId: 'com.other' })],
    ];
    for (const [name, signedPayload] of bad) {
      await expect400(handleStoreNotification({ signedPayload }, deps), /^invalid signedPayload: /).catch((e) => {
        throw new Error(`${name}: ${(e as Error).message}`);
      });
    }
    expect(repo.subscriptions.get('2000')).toEqual(before);
    const rejected = repo.notifications.filter((n) => n.outcome === 'rejected');
    expect(rejected).toHaveLength(bad.length);
    expect(rejected.every((n) => n.uuid === null && n.reason)).toBe(true);
  });

  it('answers TEST with success and no change, and records it', async () => {
    const { repo, deps } = setup();
    const result = await handleStoreNotification(
      { signedPayload: await signNotification(pki, { notificationType: 'TEST' }) },
      deps,
    );
    expect(result).toMatchObject({ status: true, outcome: 'no_change' });
    expect(repo.subscriptions.size).toBe(0);
    expect(repo.notifications).toEqual([expect.objectContaining({ type: 'TEST', outcome: 'no_change' })]);
  });

  it('does not move a subscription backwards on a late, older notification', async () => {
    const { repo, deps } = setup();
    const early = spec('DID_RENEW');
    const late = spec('REFUND');
    await handleStoreNotification(
      { signedPayload: await signNotification(pki, spec('SUBSCRIBED', { signedDate: early.signedDate! - 1 })) },
      deps,
    );
    await handleStoreNotification({ signedPayload: await signNotification(pki, late) }, deps);
    const result = await handleStoreNotification({ signedPayload: await signNotification(pki, early) }, deps);
    expect(result).toMatchObject({ status: true, outcome: 'stale' });
    expect(repo.subscriptions.get('2000')!.status).toBe('revoked');
  });

  it('keeps a subscription whose appAccountToken matches no user unlinked', async () => {
    const { repo, deps } = setup();
    repo.usersByToken.clear();
    await handleStoreNotification({ signedPayload: await signNotification(pki, spec('SUBSCRIBED')) }, deps);
    expect(repo.subscriptions.get('2000')).toMatchObject({ user_id: null, app_account_token: TOKEN });
  });
});
