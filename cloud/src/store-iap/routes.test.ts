import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { parseCloudArgs } from '../config.ts';
import {
  createCert,
  createTestPki,
  rawJws,
  signJws,
  signNotification,
  TEST_BUNDLE_ID,
  type NotificationSpec,
  type TestPki,
} from '../testing/app-store-pki.ts';
import { APPLE_LEAF_MARKER_OID } from './verify.ts';
import { DbIapRepository } from './repository.ts';
import { defaultPlanOfProduct, parseProductPlans, productPlanMap } from './product-plans.ts';

const DAY = 86_400_000;
const PRO = 'com.example.smarthome.pro.monthly';
const BUSINESS = 'com.example.smarthome.business.monthly';
const URL_PATH = '/v1/webhooks/store-iap';

let t: TestCloud;
let pki: TestPki;
let tmpDir: string;

beforeAll(async () => {
  pki = createTestPki();
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-iap-roots-'));
  const rootsFile = path.join(tmpDir, 'roots.pem');
  fs.writeFileSync(rootsFile, pki.root.pem);
  t = await startTestCloud({
    storeIapBundleId: TEST_BUNDLE_ID,
    storeIapEnvironment: 'Sandbox',
    storeIapRootsFile: rootsFile,
  });
});
afterAll(async () => {
  await t.stop();
  fs.rmSync(tmpDir, { recursive: true, force: true });
});

// ---- helpers -------------------------------------------------------------------------------

interface AuditRow {
  notification_uuid: string | null;
  type: string | null;
  subtype: string | null;
  outcome: string;
  reason: string | null;
  original_transaction_id: string | null;
  signed_date: number | null;
}
const allSubscriptions = () => t.sql('SELECT * FROM subscriptions ORDER BY id');
const auditRows = (): Promise<AuditRow[]> => t.sql<AuditRow>('SELECT * FROM store_notifications ORDER BY id');
const auditOf = async (uuid: string) => (await auditRows()).filter((r) => r.notification_uuid === uuid);

const post = (signedPayload: unknown) => t.post(URL_PATH, { body: { signedPayload } });

/** A registered user, its app_account_token (from GET /v1/account) and a fresh subscription to drive. */
async function customer() {
  const u = await t.user();
  const account = await t.get('/v1/account', { token: u.token });
  expect(account.status).toBe(200);
  const token = account.body.app_account_token as string;
  const otid = String(100000 + Math.floor(Math.random() * 1e9));
  let signedDate = Date.now() - 20 * DAY;
  const spec = (
    notificationType: string,
    o: {
      subtype?: string;
      productId?: string;
      expiresDate?: number;
      renewal?: Record<string, unknown>;
      signedDate?: number;
      notificationUUID?: string;
    } = {},
  ): NotificationSpec => ({
    notificationType,
    subtype: o.subtype,
    notificationUUID: o.notificationUUID,
    signedDate: o.signedDate ?? (signedDate += 1000),
    transaction: {
      originalTransactionId: otid,
      transactionId: String(Math.floor(Math.random() * 1e12)),
      productId: o.productId ?? PRO,
      appAccountToken: token,
      purchaseDate: Date.now() - DAY,
      expiresDate: o.expiresDate ?? Date.now() + 30 * DAY,
    },
    renewal: {
      originalTransactionId: otid,
      autoRenewStatus: 1,
      autoRenewProductId: o.productId ?? PRO,
      productId: o.productId ?? PRO,
      ...o.renewal,
    },
  });
  const send = async (s: NotificationSpec) => {
    const res = await post(await signNotification(pki, s));
    return res;
  };
  const subscriptions = async () => {
    const res = await t.get('/v1/billing/subscriptions', { token: u.token });
    expect(res.status).toBe(200);
    return res.body as Array<Record<string, unknown>>;
  };
  const only = async () => {
    const subs = await subscriptions();
    expect(subs).toHaveLength(1);
    return subs[0];
  };
  const usage = async () => (await t.get('/v1/billing/usage', { token: u.token })).body;
  return { user: u, token, otid, spec, send, subscriptions, only, usage };
}

async function expectStore400(res: Awaited<ReturnType<typeof post>>, error: RegExp | string = /.+/) {
  expect(res.status).toBe(400);
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(res.body.error).toMatch(error);
}

// ---- lifecycle over HTTP -----------------------------------------------------------------

describe('POST /v1/webhooks/store-iap: lifecycle', () => {
  it("SUBSCRIBED for a user's app_account_token: subscription listed, active, plan 2; usage limits become unlimited", async () => {
    const c = await customer();
    const before = await c.usage();
    expect(before.plan).toEqual({ id: 1, name: 'free' });
    expect(before.usage.config_entries).toEqual({ current: 0, limit: 3 });
    const expiresDate = Date.now() + 30 * DAY;
    const s = c.spec('SUBSCRIBED', { subtype: 'INITIAL_BUY', expiresDate });
    const res = await c.send(s);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: true, message: 'applied' });
    expect(await c.subscriptions()).toEqual([
      {
        id: expect.any(String),
        plan_id: 2,
        status: 'active',
        gateway_provider: 'app_store',
        auto_renew: true,
        expires_at: new Date(expiresDate).toISOString(),
        pending_plan_id: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    const after = await c.usage();
    expect(after.plan).toEqual({ id: 2, name: 'pro' });
    expect(after.usage.config_entries).toEqual({ current: 0, limit: null });
    expect(after.usage.devices.limit).toBeNull();
    expect(after.usage.automations.limit).toBeNull();
    const rows = (await auditRows()).filter((r) => r.original_transaction_id === c.otid);
    expect(rows).toEqual([
      expect.objectContaining({
        type: 'SUBSCRIBED',
        subtype: 'INITIAL_BUY',
        outcome: 'applied',
        reason: null,
        signed_date: s.signedDate,
      }),
    ]);
    expect(rows[0].notification_uuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a business product maps to plan 3 by default; the token is matched case-insensitively', async () => {
    const c = await customer();
    const s = c.spec('SUBSCRIBED', { productId: BUSINESS });
    (s.transaction as Record<string, unknown>).appAccountToken = c.token.toUpperCase();
    expect((await c.send(s)).status).toBe(200);
    expect(await c.only()).toMatchObject({ plan_id: 3, status: 'active' });
    expect((await c.usage()).plan).toEqual({ id: 3, name: 'business' });
  });

  it('DID_RENEW: active with the new expiry', async () => {
    const c = await customer();
    await c.send(c.spec('SUBSCRIBED'));
    const next = Date.now() + 61 * DAY;
    const res = await c.send(c.spec('DID_RENEW', { expiresDate: next }));
    expect(res.body).toEqual({ status: true, message: 'applied' });
    expect(await c.only()).toMatchObject({ status: 'active', plan_id: 2, expires_at: new Date(next).toISOString() });
  });

  it('DID_FAIL_TO_RENEW with GRACE_PERIOD keeps the plan until the grace end; without it, billing retry drops to free', async () => {
    const c = await customer();
    await c.send(c.spec('SUBSCRIBED'));
    const graceEnd = Date.now() + 6 * DAY;
    await c.send(
      c.spec('DID_FAIL_TO_RENEW', { subtype: 'GRACE_PERIOD', renewal: { gracePeriodExpiresDate: graceEnd } }),
    );
    expect(await c.only()).toMatchObject({ status: 'grace_period', expires_at: new Date(graceEnd).toISOString() });
    expect((await c.usage()).plan.name).toBe('pro');
    const row = await t.sqlOne<{ grace_period_expires_at: string }>(
      'SELECT grace_period_expires_at FROM subscriptions WHERE original_transaction_id = ?',
      [c.otid],
    );
    expect(row?.grace_period_expires_at).toBe(new Date(graceEnd).toISOString());

    await c.send(c.spec('DID_FAIL_TO_RENEW'));
    expect(await c.only()).toMatchObject({ status: 'billing_retry' });
    expect((await c.usage()).plan.name).toBe('free');
    expect((await c.usage()).usage.config_entries.limit).toBe(3);
  });

  it('EXPIRED (and GRACE_PERIOD_EXPIRED) → expired, back to free', async () => {
    const c = await customer();
    await c.send(c.spec('SUBSCRIBED'));
    await c.send(c.spec('EXPIRED', { subtype: 'VOLUNTARY' }));
    expect(await c.only()).toMatchObject({ status: 'expired', auto_renew: false });
    expect((await c.usage()).plan.name).toBe('free');

    const d = await customer();
    await d.send(d.spec('SUBSCRIBED'));
    await d.send(
      d.spec('DID_FAIL_TO_RENEW', { subtype: 'GRACE_PERIOD', renewal: { gracePeriodExpiresDate: Date.now() + DAY } }),
    );
    await d.send(d.spec('GRACE_PERIOD_EXPIRED'));
    expect(await d.only()).toMatchObject({ status: 'expired' });
  });

  it('REFUND → revoked; REFUND_REVERSED → restored', async () => {
    const c = await customer();
    await c.send(c.spec('SUBSCRIBED'));
    await c.send(c.spec('REFUND'));
    expect(await c.only()).toMatchObject({ status: 'revoked' });
    expect((await c.usage()).plan.name).toBe('free');
    await c.send(c.spec('REFUND_REVERSED'));
    expect(await c.only()).toMatchObject({ status: 'active', plan_id: 2 });
    expect((await c.usage()).plan.name).toBe('pro');
    await c.send(c.spec('REVOKE'));
    expect(await c.only()).toMatchObject({ status: 'revoked' });
  });

  it('DID_CHANGE_RENEWAL_STATUS flips auto-renew only', async () => {
    const c = await customer();
    await c.send(c.spec('SUBSCRIBED'));
    await c.send(
      c.spec('DID_CHANGE_RENEWAL_STATUS', { subtype: 'AUTO_RENEW_DISABLED', renewal: { autoRenewStatus: 0 } }),
    );
    expect(await c.only()).toMatchObject({ status: 'active', auto_renew: false });
    await c.send(
      c.spec('DID_CHANGE_RENEWAL_STATUS', { subtype: 'AUTO_RENEW_ENABLED', renewal: { autoRenewStatus: 1 } }),
    );
    expect(await c.only()).toMatchObject({ status: 'active', auto_renew: true });
  });

  it('DID_CHANGE_RENEWAL_PREF: UPGRADE changes the plan now, DOWNGRADE at the next renewal', async () => {
    const c = await customer();
    await c.send(c.spec('SUBSCRIBED'));
    await c.send(c.spec('DID_CHANGE_RENEWAL_PREF', { subtype: 'UPGRADE', productId: BUSINESS }));
    expect(await c.only()).toMatchObject({ plan_id: 3, pending_plan_id: null, status: 'active' });
    expect((await c.usage()).plan.name).toBe('business');

    // The downgrade: current transaction still business, renewal preference pro.
    await c.send(
      c.spec('DID_CHANGE_RENEWAL_PREF', {
        subtype: 'DOWNGRADE',
        productId: BUSINESS,
        renewal: { autoRenewProductId: PRO },
      }),
    );
    expect(await c.only()).toMatchObject({ plan_id: 3, pending_plan_id: 2 });
    expect((await c.usage()).plan.name).toBe('business');
    await c.send(c.spec('DID_RENEW', { productId: PRO }));
    expect(await c.only()).toMatchObject({ plan_id: 2, pending_plan_id: null, status: 'active' });
    expect((await c.usage()).plan.name).toBe('pro');
  });

  it('TEST (and CONSUMPTION_REQUEST) answer success and change nothing; recorded as no_change', async () => {
    const c = await customer();
    await c.send(c.spec('SUBSCRIBED'));
    const before = await allSubscriptions();
    const uuid = randomUUID();
    const res = await post(await signNotification(pki, { notificationType: 'TEST', notificationUUID: uuid }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: true, message: 'accepted (no_change)' });
    expect((await c.send(c.spec('CONSUMPTION_REQUEST'))).status).toBe(200);
    expect(await allSubscriptions()).toEqual(before);
    expect(await auditOf(uuid)).toEqual([
      expect.objectContaining({ type: 'TEST', subtype: null, outcome: 'no_change', original_transaction_id: null }),
    ]);
  });

  it('a replay answers success, changes nothing and leaves one audit row', async () => {
    const c = await customer();
    const uuid = randomUUID();
    const signed = await signNotification(pki, c.spec('SUBSCRIBED', { notificationUUID: uuid }));
    const first = await post(signed);
    expect(first.status).toBe(200);
    const after = await allSubscriptions();
    const sub = await c.only();
    const replay = await post(signed);
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ status: true });
    expect(await c.only()).toEqual(sub);
    expect(await allSubscriptions()).toEqual(after);
    // The same uuid in a different (later, otherwise applicable) notification is not applied either.
    const again = await c.send(c.spec('EXPIRED', { notificationUUID: uuid }));
    expect(again.status).toBe(200);
    expect(await c.only()).toMatchObject({ status: 'active' });
    expect(await auditOf(uuid)).toHaveLength(1);
    expect((await auditOf(uuid))[0]).toMatchObject({ type: 'SUBSCRIBED', outcome: 'applied' });
  });

  it('an older notification (signedDate) arriving late does not move the subscription back', async () => {
    const c = await customer();
    const t0 = Date.now() - 5 * DAY;
    await c.send(c.spec('SUBSCRIBED', { signedDate: t0 }));
    await c.send(c.spec('DID_RENEW', { signedDate: t0 + 2 * DAY, expiresDate: Date.now() + 40 * DAY }));
    const before = await c.only();
    const uuid = randomUUID();
    const res = await c.send(c.spec('EXPIRED', { signedDate: t0 + DAY, notificationUUID: uuid }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: true, message: 'accepted (stale)' });
    expect(await c.only()).toEqual(before);
    expect(await auditOf(uuid)).toEqual([expect.objectContaining({ type: 'EXPIRED', outcome: 'stale' })]);
  });

  it('a purchase whose appAccountToken matches no user is kept, but listed for nobody', async () => {
    const c = await customer();
    const s = c.spec('SUBSCRIBED');
    (s.transaction as Record<string, unknown>).appAccountToken = randomUUID();
    expect((await c.send(s)).status).toBe(200);
    expect(await c.subscriptions()).toEqual([]);
    const row = await t.sqlOne(
      'SELECT user_id, gateway_provider, product_id, environment FROM subscriptions WHERE original_transaction_id = ?',
      [c.otid],
    );
    expect(row).toEqual({ user_id: null, gateway_provider: 'app_store', product_id: PRO, environment: 'Sandbox' });
  });
});

// ---- rejections ---------------------------------------------------------------------------

describe('POST /v1/webhooks/store-iap: rejections change nothing', () => {
  /** An active subscription and a valid EXPIRED notification's content for it, to forge variants of. */
  async function target() {
    const c = await customer();
    expect((await c.send(c.spec('SUBSCRIBED'))).status).toBe(200);
    return c;
  }

  async function expectRejected(signedPayload: unknown, error: RegExp = /^invalid signedPayload: /) {
    const before = await allSubscriptions();
    const auditBefore = (await auditRows()).length;
    const res = await post(signedPayload);
    await expectStore400(res, error);
    expect(await allSubscriptions()).toEqual(before);
    const added = (await auditRows()).slice(auditBefore);
    expect(added).toEqual([
      expect.objectContaining({ notification_uuid: null, type: null, outcome: 'rejected', reason: expect.any(String) }),
    ]);
    return added[0];
  }

  it('a forged signature (same x5c, another key)', async () => {
    const c = await target();
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const forged: TestPki = { ...pki, leaf: { ...pki.leaf, privateKey: other.privateKey } };
    const row = await expectRejected(await signNotification(forged, c.spec('EXPIRED')));
    expect(row.reason).toBe('signedPayload: bad_signature');
    expect(await c.only()).toMatchObject({ status: 'active' });
  });

  it('a payload altered after signing', async () => {
    const c = await target();
    const [h, , s] = (await signNotification(pki, c.spec('SUBSCRIBED'))).split('.');
    const payload = Buffer.from(
      JSON.stringify({
        notificationType: 'EXPIRED',
        notificationUUID: randomUUID(),
        signedDate: Date.now(),
        data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
      }),
    ).toString('base64url');
    await expectRejected(`${h}.${payload}.${s}`);
  });

  it('a chain up to a root that is not trusted', async () => {
    const c = await target();
    const row = await expectRejected(await signNotification(createTestPki(), c.spec('EXPIRED')));
    expect(row.reason).toBe('signedPayload: untrusted_root');
  });

  it("a leaf without Apple's marker OID (under the trusted intermediate)", async () => {
    const c = await target();
    const leaf = createCert({ subject: 'No Marker Leaf', issuer: pki.intermediate, ca: false });
    const bad: TestPki = { ...pki, leaf, x5c: [leaf, pki.intermediate, pki.root].map((x) => x.der.toString('base64')) };
    const row = await expectRejected(await signNotification(bad, c.spec('EXPIRED')));
    expect(row.reason).toBe('signedPayload: missing_leaf_marker');
  });

  it('an expired chain', async () => {
    const c = await target();
    const leaf = createCert({
      subject: 'Expired Leaf',
      issuer: pki.intermediate,
      ca: false,
      markerOids: [APPLE_LEAF_MARKER_OID],
      notBefore: new Date(Date.now() - 400 * DAY),
      notAfter: new Date(Date.now() - 10 * DAY),
    });
    const bad: TestPki = { ...pki, leaf, x5c: [leaf, pki.intermediate, pki.root].map((x) => x.der.toString('base64')) };
    const row = await expectRejected(await signNotification(bad, c.spec('EXPIRED')));
    expect(row.reason).toBe('signedPayload: certificate_expired');
  });

  it('alg none and HS256', async () => {
    const c = await target();
    const payload = {
      notificationType: 'EXPIRED',
      notificationUUID: randomUUID(),
      signedDate: Date.now(),
      data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
    };
    await expectRejected(rawJws({ alg: 'none', x5c: pki.x5c }, payload));
    const unsigned = rawJws({ alg: 'HS256', x5c: pki.x5c }, payload).slice(0, -1);
    const mac = createHmac('sha256', pki.leaf.publicKey.export({ type: 'spki', format: 'pem' }))
      .update(unsigned)
      .digest('base64url');
    const row = await expectRejected(`${unsigned}.${mac}`);
    expect(row.reason).toBe('signedPayload: alg_not_allowed');
    expect(await c.only()).toMatchObject({ status: 'active' });
  });

  it('a truncated x5c', async () => {
    await target();
    const payload = {
      notificationType: 'TEST',
      notificationUUID: randomUUID(),
      signedDate: Date.now(),
      data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
    };
    const row = await expectRejected(await signJws(payload, pki, { x5c: pki.x5c.slice(0, 2) }));
    expect(row.reason).toBe('signedPayload: x5c_length');
  });

  it('garbage', async () => {
    await target();
    await expectRejected('garbage');
    await expectRejected('a.b.c');
    await expectRejected('...');
  });

  it('a nested signedTransactionInfo signed by an untrusted chain', async () => {
    const c = await target();
    const foreign = createTestPki();
    const spec = c.spec('EXPIRED');
    const transaction = await signJws(
      { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox', ...spec.transaction },
      foreign,
    );
    const payload = {
      notificationType: 'EXPIRED',
      notificationUUID: randomUUID(),
      signedDate: spec.signedDate,
      data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox', signedTransactionInfo: transaction },
    };
    const row = await expectRejected(await signJws(payload, pki));
    expect(row.reason).toBe('signedTransactionInfo: untrusted_root');
  });

  it('another bundle id or the Production environment', async () => {
    const c = await target();
    await expectRejected(await signNotification(pki, { ...c.spec('EXPIRED'), bundleId: 'com.evil.app' }));
    await expectRejected(await signNotification(pki, { ...c.spec('EXPIRED'), environment: 'Production' }));
  });

  it("a rejected notification's uuid does not block the genuine one", async () => {
    const c = await target();
    const uuid = randomUUID();
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await expectRejected(
      await signNotification(
        { ...pki, leaf: { ...pki.leaf, privateKey: other.privateKey } },
        c.spec('EXPIRED', { notificationUUID: uuid }),
      ),
    );
    expect((await c.send(c.spec('EXPIRED', { notificationUUID: uuid }))).body).toEqual({
      status: true,
      message: 'applied',
    });
    expect(await c.only()).toMatchObject({ status: 'expired' });
  });

  it('missing signedPayload, malformed JSON, a non-object body → 400 {error}; oversize → 413 {message}', async () => {
    await target();
    const before = await allSubscriptions();
    const auditBefore = (await auditRows()).length;
    await expectStore400(await t.post(URL_PATH, { body: {} }), 'missing signedPayload');
    await expectStore400(await t.post(URL_PATH), 'missing signedPayload');
    await expectStore400(await t.post(URL_PATH, { body: { signedPayload: 42 } }), 'missing signedPayload');
    await expectStore400(await t.post(URL_PATH, { body: { signedPayload: '' } }), 'missing signedPayload');
    await expectStore400(await t.post(URL_PATH, { body: [1, 2] }), 'missing signedPayload');
    await expectStore400(await t.post(URL_PATH, { raw: '{"signedPayload":' }), 'malformed JSON body');
    await expectStore400(
      await t.post(URL_PATH, { body: { signedPayload: 'x'.repeat(100_001) } }),
      'signedPayload too large',
    );
    const big = await t.post(URL_PATH, { raw: JSON.stringify({ signedPayload: 'x'.repeat(300 * 1024) }) });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ message: 'body too large' });
    expect(await allSubscriptions()).toEqual(before);
    // Not notifications: nothing to audit.
    expect((await auditRows()).length).toBe(auditBefore);
  });

  it('needs no Authorization header and ignores one', async () => {
    const c = await customer();
    const res = await t.post(URL_PATH, {
      token: 'not-a-token',
      body: { signedPayload: await signNotification(pki, c.spec('SUBSCRIBED')) },
    });
    expect(res.status).toBe(200);
  });
});

// ---- mounting, docs, configuration ---------------------------------------------------------

describe('store receiver wiring', () => {
  it('is in the OpenAPI document with its body, no security, and 400/413 (and the 503 of a database outage)', async () => {
    const doc = (await t.get('/openapi.json')).body;
    const op = doc.paths[URL_PATH].post;
    expect(op.security).toEqual([]);
    expect(op.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/StoreNotification');
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '413', '503']);
  });

  it('documents its 400 as {error} (ErrorCode, as it answers), 413 as {message}, and the StoreNotification body', async () => {
    const doc = (await t.get('/openapi.json')).body;
    const op = doc.paths[URL_PATH].post;
    expect(op.responses['400'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorCode');
    expect(op.responses['413'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorMessage');
    expect(op.requestBody.required).toBe(true);
    expect(op.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/StoreNotification');
    expect(doc.components.schemas.StoreNotification.properties.signedPayload.type).toBe('string');
    // Listed once: the spec itself is mounted (no copy swapped in).
    expect(t.cloud.routes.filter((r) => r.path === URL_PATH)).toHaveLength(1);
    // The receiver reads the body itself: a non-object body is still its own 400 {error}.
    const res = await t.request('POST', URL_PATH, { body: [] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.any(String) });
  });

  it('without STORE_IAP_BUNDLE_ID the cloud starts and the receiver answers 400 "store receiver not configured", recorded', async () => {
    const bare = await startTestCloud();
    try {
      const res = await bare.post(URL_PATH, {
        body: { signedPayload: await signNotification(pki, { notificationType: 'TEST' }) },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'store receiver not configured' });
      expect((await bare.post(URL_PATH, { body: {} })).body).toEqual({ error: 'missing signedPayload' });
      const rows = await bare.sql('SELECT notification_uuid, outcome, reason FROM store_notifications');
      expect(rows).toEqual([
        {
          notification_uuid: null,
          outcome: 'rejected',
          reason: expect.stringMatching(/^not_configured: .*STORE_IAP_BUNDLE_ID/),
        },
      ]);
      expect(await bare.sqlOne('SELECT COUNT(*) AS n FROM subscriptions')).toEqual({ n: 0 });
    } finally {
      await bare.stop();
    }
  });

  it('an unreadable roots file does not stop the cloud either', async () => {
    const bare = await startTestCloud({
      storeIapBundleId: TEST_BUNDLE_ID,
      storeIapRootsFile: path.join(tmpDir, 'missing.pem'),
    });
    try {
      expect((await bare.post(URL_PATH, { body: { signedPayload: 'a.b.c' } })).body).toEqual({
        error: 'store receiver not configured',
      });
    } finally {
      await bare.stop();
    }
  });

  it('STORE_IAP_PRODUCT_PLANS maps products to plans, authoritatively', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-iap-plans-'));
    const plans = await startTestCloud(
      {
        storeIapBundleId: TEST_BUNDLE_ID,
        storeIapEnvironment: 'Sandbox',
        storeIapRootsFile: path.join(tmpDir, 'roots.pem'),
        storeIapProductPlans: { 'com.example.smarthome.family': 3 },
      },
      { dataDir: dir },
    );
    try {
      const u = await plans.user();
      const token = (await plans.get('/v1/account', { token: u.token })).body.app_account_token as string;
      const sub = (productId: string, otid: string) =>
        signNotification(pki, {
          notificationType: 'SUBSCRIBED',
          transaction: {
            originalTransactionId: otid,
            productId,
            appAccountToken: token,
            expiresDate: Date.now() + DAY,
          },
        });
      expect((await plans.post(URL_PATH, { body: { signedPayload: await sub(PRO, 'p-1') } })).body).toEqual({
        status: true,
        message: 'accepted (unknown_product)',
      });
      expect((await plans.get('/v1/billing/subscriptions', { token: u.token })).body).toEqual([]);
      expect(
        (await plans.post(URL_PATH, { body: { signedPayload: await sub('com.example.smarthome.family', 'p-2') } }))
          .body,
      ).toEqual({ status: true, message: 'applied' });
      expect((await plans.get('/v1/billing/subscriptions', { token: u.token })).body).toEqual([
        expect.objectContaining({ plan_id: 3, status: 'active' }),
      ]);
    } finally {
      await plans.stop();
    }
  });

  it('parses STORE_IAP_PRODUCT_PLANS; the default maps "business" to 3 and anything else to 2', () => {
    expect(parseCloudArgs([], { STORE_IAP_PRODUCT_PLANS: '{"a.pro":2,"a.biz":3}' }).storeIapProductPlans).toEqual({
      'a.pro': 2,
      'a.biz': 3,
    });
    expect(parseCloudArgs([], {}).storeIapProductPlans).toBeUndefined();
    expect(() => parseProductPlans('[1]')).toThrow(/STORE_IAP_PRODUCT_PLANS/);
    expect(() => parseProductPlans('{"a":"pro"}')).toThrow(/STORE_IAP_PRODUCT_PLANS/);
    expect(() => parseProductPlans('{"a":0}')).toThrow(/STORE_IAP_PRODUCT_PLANS/);
    expect(() => parseProductPlans('nope')).toThrow(/STORE_IAP_PRODUCT_PLANS/);
    expect(Object.hasOwn(parseProductPlans('{"__proto__":2}'), '__proto__')).toBe(true);
    expect(defaultPlanOfProduct('com.x.Business.yearly')).toBe(3);
    expect(defaultPlanOfProduct('com.x.pro.monthly')).toBe(2);
    expect(defaultPlanOfProduct('anything')).toBe(2);
    expect(productPlanMap({ a: 3 })).toEqual({ a: 3 });
  });
});

describe('DbIapRepository', () => {
  it('records the uuid and the subscription change atomically: a failure rolls both back', async () => {
    const repo = new DbIapRepository(t.cloud.database);
    const uuid = randomUUID();
    const now = new Date().toISOString();
    await expect(
      repo.transaction(async (r) => {
        await r.recordNotification({
          uuid,
          type: 'SUBSCRIBED',
          subtype: null,
          outcome: 'applied',
          reason: null,
          original_transaction_id: 'atomic-1',
          signed_date: 1,
          received_at: now,
        });
        await r.upsertSubscription({
          id: randomUUID(),
          plan_id: 2,
          status: 'active',
          gateway_provider: 'app_store',
          auto_renew: true,
          expires_at: null,
          pending_plan_id: null,
          created_at: now,
          updated_at: now,
          original_transaction_id: 'atomic-1',
          user_id: null,
          app_account_token: null,
          product_id: PRO,
          environment: 'Sandbox',
          grace_period_expires_at: null,
          last_signed_date: 1,
          last_notification_type: 'SUBSCRIBED',
        });
        throw new Error('crash after both writes');
      }),
    ).rejects.toThrow('crash after both writes');
    expect(await auditOf(uuid)).toEqual([]);
    expect(await repo.findByOriginalTransactionId('atomic-1')).toBeNull();
    // and the uuid is still free
    expect(
      await repo.recordNotification({
        uuid,
        type: 'TEST',
        subtype: null,
        outcome: 'no_change',
        reason: null,
        original_transaction_id: null,
        signed_date: 1,
        received_at: now,
      }),
    ).toBe(false);
    expect(
      await repo.recordNotification({
        uuid,
        type: 'TEST',
        subtype: null,
        outcome: 'no_change',
        reason: null,
        original_transaction_id: null,
        signed_date: 1,
        received_at: now,
      }),
    ).toBe(true);
  });

  it('serialises concurrent notifications (no nested transactions)', async () => {
    const c = await customer();
    const specs = [
      c.spec('SUBSCRIBED'),
      c.spec('DID_RENEW'),
      c.spec('DID_CHANGE_RENEWAL_STATUS', { subtype: 'AUTO_RENEW_DISABLED', renewal: { autoRenewStatus: 0 } }),
    ];
    const signed = await Promise.all(specs.map((s) => signNotification(pki, s)));
    const results = await Promise.all([...signed, ...signed].map((p) => post(p)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect((await auditRows()).filter((r) => r.original_transaction_id === c.otid)).toHaveLength(3);
    expect(await c.only()).toMatchObject({ status: 'active' });
  });
});
