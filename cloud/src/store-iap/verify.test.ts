import { createHmac, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactSign } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createTestPki,
  rawJws,
  signJws,
  signNotification,
  TEST_BUNDLE_ID,
  type NotificationSpec,
  type TestPki,
} from '../testing/app-store-pki.ts';
import {
  APPLE_ROOT_CA_G3_SHA256,
  createStoreVerifier,
  loadAppleRootCaG3,
  parsePemBundle,
  StoreVerificationError,
  StoreVerifierConfigError,
  storeVerifierOptionsFromEnv,
  type StoreVerificationReason,
  type StoreVerifierOptions,
} from './verify.ts';

const DAY = 86_400_000;
let pki: TestPki;
let otherPki: TestPki;

beforeAll(() => {
  pki = createTestPki();
  otherPki = createTestPki({ rootName: 'Other Root' });
});

const verifierFor = (trusted: TestPki, options: Partial<StoreVerifierOptions> = {}) =>
  createStoreVerifier({ roots: [trusted.root.pem], bundleId: TEST_BUNDLE_ID, environment: 'Sandbox', ...options });

const subscribed = (overrides: Partial<NotificationSpec> = {}): NotificationSpec => ({
  notificationType: 'SUBSCRIBED',
  subtype: 'INITIAL_BUY',
  transaction: {
    originalTransactionId: '1000',
    transactionId: '1000',
    productId: 'com.example.smarthome.pro.monthly',
    expiresDate: Date.now() + 30 * DAY,
  },
  renewal: {
    originalTransactionId: '1000',
    autoRenewStatus: 1,
    autoRenewProductId: 'com.example.smarthome.pro.monthly',
  },
  ...overrides,
});

async function expectRejected(promise: Promise<unknown>, reason: StoreVerificationReason, where = 'signedPayload') {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected rejection with ${reason}`).toBeInstanceOf(StoreVerificationError);
  expect((err as StoreVerificationError).reason).toBe(reason);
  expect((err as StoreVerificationError).where).toBe(where);
}

/** Re-encodes one part of a compact JWS. */
function replacePayload(jws: string, mutate: (payload: Record<string, unknown>) => void): string {
  const [h, p, s] = jws.split('.');
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
  mutate(payload);
  return `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
}

describe('store-iap verify: valid notifications', () => {
  it('verifies the payload and the nested transaction and renewal info', async () => {
    const jws = await signNotification(pki, subscribed());
    const result = await verifierFor(pki).verifyNotification(jws);
    expect(result.payload.notificationType).toBe('SUBSCRIBED');
    expect(result.payload.subtype).toBe('INITIAL_BUY');
    expect(result.transaction?.originalTransactionId).toBe('1000');
    expect(result.transaction?.productId).toBe('com.example.smarthome.pro.monthly');
    expect(result.renewal?.autoRenewStatus).toBe(1);
  });

  it('accepts a TEST notification without transaction info', async () => {
    const jws = await signNotification(pki, { notificationType: 'TEST' });
    const result = await verifierFor(pki).verifyNotification(jws);
    expect(result.payload.notificationType).toBe('TEST');
    expect(result.transaction).toBeUndefined();
    expect(result.renewal).toBeUndefined();
  });

  it('accepts a trusted root given as X509Certificate and from a PEM bundle with several roots', async () => {
    const jws = await signNotification(pki, subscribed());
    await expect(
      createStoreVerifier({
        roots: [pki.root.x509],
        bundleId: TEST_BUNDLE_ID,
        environment: 'Sandbox',
      }).verifyNotification(jws),
    ).resolves.toBeDefined();
    const bundle = otherPki.root.pem + pki.root.pem;
    await expect(
      createStoreVerifier({ roots: [bundle], bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' }).verifyNotification(
        jws,
      ),
    ).resolves.toBeDefined();
  });

  it('allows a small clock skew on validity dates', async () => {
    const skewed = createTestPki({
      leafValidity: { notBefore: new Date(Date.now() + 2 * 60_000), notAfter: new Date(Date.now() + DAY) },
    });
    await expect(
      verifierFor(skewed).verifyNotification(await signNotification(skewed, subscribed())),
    ).resolves.toBeDefined();
  });

  it('verifies Production notifications when configured for Production', async () => {
    const jws = await signNotification(pki, subscribed({ environment: 'Production' }));
    const result = await verifierFor(pki, { environment: 'Production' }).verifyNotification(jws);
    expect(result.transaction?.environment).toBe('Production');
  });
});

describe('store-iap verify: rejections', () => {
  it('rejects a forged signature (signed by another key with the genuine x5c)', async () => {
    const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jws = await signJws(
      {
        notificationType: 'TEST',
        notificationUUID: 'u',
        signedDate: Date.now(),
        data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
      },
      pki,
      { key: forger.privateKey },
    );
    await expectRejected(verifierFor(pki).verifyNotification(jws), 'bad_signature');
  });

  it('rejects a payload modified after signing', async () => {
    const jws = await signNotification(pki, { notificationType: 'TEST' });
    const tampered = replacePayload(jws, (p) => {
      p.notificationType = 'REFUND_REVERSED';
    });
    await expectRejected(verifierFor(pki).verifyNotification(tampered), 'bad_signature');
  });

  it('rejects a chain from an untrusted root', async () => {
    await expectRejected(
      verifierFor(pki).verifyNotification(await signNotification(otherPki, subscribed())),
      'untrusted_root',
    );
  });

  it('rejects a look-alike root with the trusted root’s name but another key', async () => {
    const lookAlike = createTestPki({ rootName: pki.root.cn });
    await expectRejected(
      verifierFor(pki).verifyNotification(await signNotification(lookAlike, subscribed())),
      'untrusted_root',
    );
  });

  it('rejects an untrusted chain that carries the trusted root as its third certificate', async () => {
    const x5c = [otherPki.x5c[0], otherPki.x5c[1], pki.x5c[2]];
    const jws = await signJws(
      {
        notificationType: 'TEST',
        notificationUUID: 'u',
        signedDate: Date.now(),
        data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
      },
      otherPki,
      { x5c },
    );
    await expectRejected(verifierFor(pki).verifyNotification(jws), 'untrusted_root');
  });

  it('rejects a trusted intermediate presented with an untrusted x5c root', async () => {
    const x5c = [pki.x5c[0], pki.x5c[1], otherPki.x5c[2]];
    const jws = await signJws(
      {
        notificationType: 'TEST',
        notificationUUID: 'u',
        signedDate: Date.now(),
        data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
      },
      pki,
      { x5c },
    );
    await expectRejected(verifierFor(pki).verifyNotification(jws), 'untrusted_root');
  });

  it('rejects a leaf issued by another intermediate (chaining)', async () => {
    const x5c = [otherPki.x5c[0], pki.x5c[1], pki.x5c[2]];
    const jws = await signJws({ notificationType: 'TEST' }, otherPki, { x5c });
    await expectRejected(verifierFor(pki).verifyNotification(jws), 'chain_signature');
  });

  it('rejects a leaf without the Apple leaf marker OID', async () => {
    const noMarker = createTestPki({ leafMarker: false });
    await expectRejected(
      verifierFor(noMarker).verifyNotification(await signNotification(noMarker, subscribed())),
      'missing_leaf_marker',
    );
  });

  it('rejects an intermediate without the Apple intermediate marker OID', async () => {
    const noMarker = createTestPki({ intermediateMarker: false });
    await expectRejected(
      verifierFor(noMarker).verifyNotification(await signNotification(noMarker, subscribed())),
      'missing_intermediate_marker',
    );
  });

  it('rejects a leaf that is a CA', async () => {
    const caLeaf = createTestPki({ leafIsCa: true });
    await expectRejected(
      verifierFor(caLeaf).verifyNotification(await signNotification(caLeaf, subscribed())),
      'ca_flags',
    );
  });

  it('rejects an intermediate that is not a CA', async () => {
    const notCa = createTestPki({ intermediateIsCa: false });
    const err = await verifierFor(notCa)
      .verifyNotification(await signNotification(notCa, subscribed()))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreVerificationError);
    // OpenSSL's issuer check already refuses a non-CA issuer; either way it is rejected.
    expect(['ca_flags', 'chain_issuer_mismatch']).toContain((err as StoreVerificationError).reason);
  });

  it('rejects an expired leaf, intermediate or root', async () => {
    const past = { notBefore: new Date(Date.now() - 400 * DAY), notAfter: new Date(Date.now() - DAY) };
    for (const options of [{ leafValidity: past }, { intermediateValidity: past }, { rootValidity: past }]) {
      const expired = createTestPki(options);
      await expectRejected(
        verifierFor(expired).verifyNotification(await signNotification(expired, subscribed())),
        'certificate_expired',
      );
    }
  });

  it('rejects a chain that is not yet valid', async () => {
    const future = { notBefore: new Date(Date.now() + DAY), notAfter: new Date(Date.now() + 400 * DAY) };
    const early = createTestPki({ leafValidity: future });
    await expectRejected(
      verifierFor(early).verifyNotification(await signNotification(early, subscribed())),
      'certificate_not_yet_valid',
    );
  });

  it('checks validity against the configured clock', async () => {
    const jws = await signNotification(pki, subscribed());
    await expectRejected(
      verifierFor(pki, { now: () => new Date(Date.now() + 3 * 365 * DAY) }).verifyNotification(jws),
      'certificate_expired',
    );
    await expectRejected(
      verifierFor(pki, { now: () => new Date(Date.now() - 3 * DAY) }).verifyNotification(jws),
      'certificate_not_yet_valid',
    );
  });

  it('rejects alg none', async () => {
    const payload = {
      notificationType: 'TEST',
      notificationUUID: 'u',
      signedDate: Date.now(),
      data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
    };
    await expectRejected(
      verifierFor(pki).verifyNotification(rawJws({ alg: 'none', x5c: pki.x5c }, payload)),
      'alg_not_allowed',
    );
    await expectRejected(verifierFor(pki).verifyNotification(rawJws({ alg: 'none' }, payload)), 'alg_not_allowed');
    await expectRejected(
      verifierFor(pki).verifyNotification(rawJws({ x5c: pki.x5c }, payload, 'c2ln')),
      'alg_not_allowed',
    );
  });

  it('rejects HS256 (including an HMAC keyed with the leaf public key)', async () => {
    const payload = {
      notificationType: 'TEST',
      notificationUUID: 'u',
      signedDate: Date.now(),
      data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
    };
    const header = { alg: 'HS256', x5c: pki.x5c };
    const unsigned = rawJws(header, payload).slice(0, -1);
    const secret = pki.leaf.publicKey.export({ type: 'spki', format: 'pem' });
    const mac = createHmac('sha256', secret).update(unsigned).digest();
    await expectRejected(
      verifierFor(pki).verifyNotification(`${unsigned}.${mac.toString('base64url')}`),
      'alg_not_allowed',
    );
  });

  it('rejects RS256 and other algorithms', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const payload = new TextEncoder().encode(JSON.stringify({ notificationType: 'TEST' }));
    const rs256 = await new CompactSign(payload)
      .setProtectedHeader({ alg: 'RS256', x5c: pki.x5c })
      .sign(rsa.privateKey);
    await expectRejected(verifierFor(pki).verifyNotification(rs256), 'alg_not_allowed');
    for (const alg of ['ES384', 'ES512', 'es256', 'PS256', 'EdDSA']) {
      await expectRejected(
        verifierFor(pki).verifyNotification(rawJws({ alg, x5c: pki.x5c }, { notificationType: 'TEST' }, 'c2ln')),
        'alg_not_allowed',
      );
    }
  });

  it('rejects a truncated, missing, oversized or garbled x5c', async () => {
    const payload = {
      notificationType: 'TEST',
      notificationUUID: 'u',
      signedDate: Date.now(),
      data: { bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
    };
    const v = verifierFor(pki);
    await expectRejected(v.verifyNotification(await signJws(payload, pki, { x5c: pki.x5c.slice(0, 1) })), 'x5c_length');
    await expectRejected(v.verifyNotification(await signJws(payload, pki, { x5c: pki.x5c.slice(0, 2) })), 'x5c_length');
    await expectRejected(
      v.verifyNotification(await signJws(payload, pki, { x5c: [...pki.x5c, pki.x5c[2]] })),
      'x5c_length',
    );
    await expectRejected(v.verifyNotification(await signJws(payload, pki, { x5c: [] })), 'x5c_length');
    await expectRejected(v.verifyNotification(rawJws({ alg: 'ES256' }, payload, 'c2ln')), 'missing_x5c');
    await expectRejected(v.verifyNotification(rawJws({ alg: 'ES256', x5c: 'MIIB' }, payload, 'c2ln')), 'missing_x5c');
    await expectRejected(
      v.verifyNotification(
        rawJws({ alg: 'ES256', x5c: [pki.x5c[0], 'bm90IGEgY2VydA==', pki.x5c[2]] }, payload, 'c2ln'),
      ),
      'bad_certificate',
    );
    await expectRejected(
      v.verifyNotification(rawJws({ alg: 'ES256', x5c: [pki.x5c[0], 42, pki.x5c[2]] }, payload, 'c2ln')),
      'bad_certificate',
    );
  });

  it('rejects garbage', async () => {
    const v = verifierFor(pki);
    for (const garbage of [
      '',
      'garbage',
      'a.b',
      'a.b.c',
      '...',
      'eyJhbGciOiJFUzI1NiJ9',
      `${Buffer.from('{"alg":').toString('base64url')}.e30.c2ln`,
      'a.b.c.d.e',
      'äöü.x.y',
    ]) {
      await expectRejected(v.verifyNotification(garbage), 'malformed_jws');
    }
    for (const notString of [undefined, null, 42, {}, ['a.b.c']])
      await expectRejected(v.verifyNotification(notString), 'malformed_jws');
  });

  it('rejects a signed payload that is not a notification', async () => {
    const v = verifierFor(pki);
    await expectRejected(v.verifyNotification(await signJws({ hello: 'world' }, pki)), 'bad_payload');
    await expectRejected(v.verifyNotification(await signJws('just a string', pki)), 'bad_payload');
  });

  it('rejects the wrong bundle id', async () => {
    await expectRejected(
      verifierFor(pki).verifyNotification(await signNotification(pki, subscribed({ bundleId: 'com.attacker.app' }))),
      'bundle_id_mismatch',
    );
    await expectRejected(
      verifierFor(pki, { bundleId: 'com.other' }).verifyNotification(
        await signNotification(pki, { notificationType: 'TEST' }),
      ),
      'bundle_id_mismatch',
    );
  });

  it('rejects the wrong environment', async () => {
    await expectRejected(
      verifierFor(pki).verifyNotification(await signNotification(pki, subscribed({ environment: 'Production' }))),
      'environment_mismatch',
    );
    await expectRejected(
      verifierFor(pki, { environment: 'Production' }).verifyNotification(await signNotification(pki, subscribed())),
      'environment_mismatch',
    );
  });
});

describe('store-iap verify: nested signed info', () => {
  async function withNested(
    mutate: (data: Record<string, unknown>) => Promise<void> | void,
    signer = pki,
  ): Promise<string> {
    const base = await signNotification(pki, subscribed());
    const payload = JSON.parse(Buffer.from(base.split('.')[1], 'base64url').toString());
    await mutate(payload.data);
    return signJws(payload, signer);
  }

  it('rejects a tampered signedTransactionInfo inside a validly signed notification', async () => {
    const jws = await withNested((data) => {
      data.signedTransactionInfo = replacePayload(data.signedTransactionInfo as string, (t) => {
        t.productId = 'com.example.smarthome.business.yearly';
      });
    });
    await expectRejected(verifierFor(pki).verifyNotification(jws), 'bad_signature', 'signedTransactionInfo');
  });

  it('rejects a tampered signedRenewalInfo', async () => {
    const jws = await withNested((data) => {
      data.signedRenewalInfo = replacePayload(data.signedRenewalInfo as string, (r) => {
        r.autoRenewStatus = 0;
      });
    });
    await expectRejected(verifierFor(pki).verifyNotification(jws), 'bad_signature', 'signedRenewalInfo');
  });

  it('rejects nested info signed by an untrusted chain', async () => {
    const jws = await withNested(async (data) => {
      data.signedTransactionInfo = await signJws(
        { originalTransactionId: '1000', productId: 'x', bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' },
        otherPki,
      );
    });
    await expectRejected(verifierFor(pki).verifyNotification(jws), 'untrusted_root', 'signedTransactionInfo');
  });

  it('rejects nested info with alg none or garbage', async () => {
    const none = await withNested((data) => {
      data.signedTransactionInfo = rawJws({ alg: 'none' }, { originalTransactionId: '1000', productId: 'x' });
    });
    await expectRejected(verifierFor(pki).verifyNotification(none), 'alg_not_allowed', 'signedTransactionInfo');
    const garbage = await withNested((data) => {
      data.signedRenewalInfo = 'garbage';
    });
    await expectRejected(verifierFor(pki).verifyNotification(garbage), 'malformed_jws', 'signedRenewalInfo');
  });

  it('rejects nested info for another app or environment, or another subscription', async () => {
    const otherApp = await withNested(async (data) => {
      data.signedTransactionInfo = await signJws(
        { originalTransactionId: '1000', productId: 'x', bundleId: 'com.other', environment: 'Sandbox' },
        pki,
      );
    });
    await expectRejected(verifierFor(pki).verifyNotification(otherApp), 'bundle_id_mismatch', 'signedTransactionInfo');
    const otherEnv = await withNested(async (data) => {
      data.signedTransactionInfo = await signJws(
        { originalTransactionId: '1000', productId: 'x', bundleId: TEST_BUNDLE_ID, environment: 'Production' },
        pki,
      );
    });
    await expectRejected(
      verifierFor(pki).verifyNotification(otherEnv),
      'environment_mismatch',
      'signedTransactionInfo',
    );
    const mixed = await withNested(async (data) => {
      data.signedRenewalInfo = await signJws(
        { originalTransactionId: '2000', autoRenewStatus: 1, environment: 'Sandbox' },
        pki,
      );
    });
    await expectRejected(verifierFor(pki).verifyNotification(mixed), 'inconsistent_payload', 'signedRenewalInfo');
  });
});

describe('store-iap verify: configuration and the Apple root', () => {
  it('ships the real Apple Root CA - G3', () => {
    const apple = loadAppleRootCaG3();
    expect(apple.fingerprint256).toBe(APPLE_ROOT_CA_G3_SHA256);
    expect(apple.fingerprint256).toBe(
      '63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79',
    );
    expect(apple.subject).toContain('CN=Apple Root CA - G3');
    expect(apple.ca).toBe(true);
    expect(apple.checkIssued(apple)).toBe(true);
    expect(apple.verify(apple.publicKey)).toBe(true);
    expect(apple.validToDate.getUTCFullYear()).toBe(2039);
  });

  it('trusts Apple Root CA - G3 by default, and only it for Production', async () => {
    const production = createStoreVerifier({ bundleId: TEST_BUNDLE_ID, environment: 'Production' });
    expect(production.roots.map((r) => r.fingerprint256)).toEqual([APPLE_ROOT_CA_G3_SHA256]);
    await expectRejected(
      production.verifyNotification(await signNotification(pki, subscribed({ environment: 'Production' }))),
      'untrusted_root',
    );
    expect(verifierFor(pki).roots).toHaveLength(2);
  });

  it('refuses to run without trusted roots or with a non-CA root', () => {
    expect(() =>
      createStoreVerifier({
        roots: [],
        includeAppleRootCaG3: false,
        bundleId: TEST_BUNDLE_ID,
        environment: 'Production',
      }),
    ).toThrow(StoreVerifierConfigError);
    expect(() =>
      createStoreVerifier({ roots: [pki.leaf.pem], bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' }),
    ).toThrow(/not a CA/);
    expect(() =>
      createStoreVerifier({ roots: ['not a pem'], bundleId: TEST_BUNDLE_ID, environment: 'Sandbox' }),
    ).toThrow(StoreVerifierConfigError);
    expect(() => createStoreVerifier({ bundleId: '', environment: 'Sandbox' })).toThrow(StoreVerifierConfigError);
    expect(() => createStoreVerifier({ bundleId: 'x', environment: 'Xcode' as 'Sandbox' })).toThrow(
      StoreVerifierConfigError,
    );
  });

  it('reads STORE_IAP_ROOTS_FILE, STORE_IAP_BUNDLE_ID and STORE_IAP_ENVIRONMENT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-iap-'));
    const file = join(dir, 'roots.pem');
    writeFileSync(file, `# sandbox + tests\n${otherPki.root.pem}\n${pki.root.pem}`);
    const options = storeVerifierOptionsFromEnv({
      STORE_IAP_ROOTS_FILE: file,
      STORE_IAP_BUNDLE_ID: TEST_BUNDLE_ID,
      STORE_IAP_ENVIRONMENT: 'Sandbox',
    });
    const verifier = createStoreVerifier(options);
    expect(verifier.roots).toHaveLength(3);
    await expect(verifier.verifyNotification(await signNotification(pki, subscribed()))).resolves.toBeDefined();
    expect(storeVerifierOptionsFromEnv({ STORE_IAP_BUNDLE_ID: 'b' }).environment).toBe('Production');
    expect(() => storeVerifierOptionsFromEnv({ STORE_IAP_BUNDLE_ID: 'b', STORE_IAP_ENVIRONMENT: 'sandbox' })).toThrow(
      StoreVerifierConfigError,
    );
    expect(() => storeVerifierOptionsFromEnv({})).toThrow(/STORE_IAP_BUNDLE_ID/);
  });

  it('parses PEM bundles', () => {
    const certs = parsePemBundle(`junk\n${pki.root.pem}junk\n${pki.intermediate.pem}`);
    expect(certs.map((c) => c.fingerprint256)).toEqual([
      pki.root.x509.fingerprint256,
      pki.intermediate.x509.fingerprint256,
    ]);
    expect(certs[0]).toBeInstanceOf(X509Certificate);
  });
});
