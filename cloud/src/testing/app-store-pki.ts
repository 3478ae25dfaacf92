/**
 * Test-only PKI for the store receiver: builds a root CA, an Apple-like intermediate
 * (marker OID 1.2.840.113635.100.6.2.1) and leaf (marker OID 1.2.840.113635.100.6.11.1),
 * all EC P-256, at test time, and signs App Store Server Notifications v2 with them.
 *
 * Certificates are assembled with @peculiar/asn1-x509 (the ASN.1 schema library the
 * verifier already uses to read extensions) and signed with node:crypto; no openssl,
 * no extra dependency. Never import this from production code.
 */
import { generateKeyPairSync, randomBytes, sign as cryptoSign, X509Certificate, type KeyObject } from 'node:crypto';
import { CompactSign } from 'jose';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  BasicConstraints,
  Certificate,
  Extension,
  Extensions,
  id_ce_basicConstraints,
  id_ce_keyUsage,
  KeyUsage,
  KeyUsageFlags,
  Name,
  RelativeDistinguishedName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
} from '@peculiar/asn1-x509';
import { APPLE_INTERMEDIATE_MARKER_OID, APPLE_LEAF_MARKER_OID } from '../store-iap/verify.ts';

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const COMMON_NAME = '2.5.4.3';
const DAY = 86_400_000;

export interface TestCert {
  /** Common name of the subject. */
  cn: string;
  pem: string;
  der: Buffer;
  x509: X509Certificate;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export interface CertOptions {
  subject: string;
  /** Signs the certificate; omitted = self-signed. */
  issuer?: TestCert;
  ca: boolean;
  /** Extra (non-critical) extensions by OID, e.g. the Apple marker OIDs. */
  markerOids?: string[];
  notBefore?: Date;
  notAfter?: Date;
  /** Use an existing key pair (e.g. to forge a same-name certificate with a known key). */
  keys?: { privateKey: KeyObject; publicKey: KeyObject };
  /** Sign with this key instead of the issuer's (a forged chain signature). */
  signingKey?: KeyObject;
}

function name(cn: string): Name {
  return new Name([
    new RelativeDistinguishedName([
      new AttributeTypeAndValue({ type: COMMON_NAME, value: new AttributeValue({ utf8String: cn }) }),
    ]),
  ]);
}

function toPem(der: Buffer): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`;
}

/** Builds and signs one X.509 v3 certificate (EC P-256, ecdsa-with-SHA256). */
export function createCert(options: CertOptions): TestCert {
  const keys = options.keys ?? generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = Date.now();
  const serial = randomBytes(12);
  serial[0] &= 0x7f; // positive INTEGER
  serial[0] |= 0x01;
  const extensions: Extension[] = [
    new Extension({
      extnID: id_ce_basicConstraints,
      critical: true,
      extnValue: new OctetString(AsnConvert.serialize(new BasicConstraints({ cA: options.ca }))),
    }),
    new Extension({
      extnID: id_ce_keyUsage,
      critical: true,
      extnValue: new OctetString(
        AsnConvert.serialize(
          new KeyUsage(options.ca ? KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign : KeyUsageFlags.digitalSignature),
        ),
      ),
    }),
    // Apple's marker extensions carry an ASN.1 NULL.
    ...(options.markerOids ?? []).map(
      (oid) =>
        new Extension({ extnID: oid, critical: false, extnValue: new OctetString(new Uint8Array([0x05, 0x00])) }),
    ),
  ];
  const spki = AsnConvert.parse(keys.publicKey.export({ type: 'spki', format: 'der' }), SubjectPublicKeyInfo);
  const tbs = new TBSCertificate({
    version: 2, // v3
    serialNumber: serial.buffer.slice(serial.byteOffset, serial.byteOffset + serial.byteLength),
    signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
    issuer: name(options.issuer ? options.issuer.cn : options.subject),
    validity: new Validity({
      notBefore: options.notBefore ?? new Date(now - DAY),
      notAfter: options.notAfter ?? new Date(now + 365 * DAY),
    }),
    subject: name(options.subject),
    subjectPublicKeyInfo: spki,
    extensions: new Extensions(extensions),
  });
  const tbsDer = Buffer.from(AsnConvert.serialize(tbs));
  const signer = options.signingKey ?? options.issuer?.privateKey ?? keys.privateKey;
  const signature = cryptoSign('sha256', tbsDer, { key: signer, dsaEncoding: 'der' });
  const cert = new Certificate({
    tbsCertificate: tbs,
    signatureAlgorithm: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
    signatureValue: signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.byteLength),
  });
  const der = Buffer.from(AsnConvert.serialize(cert));
  return {
    cn: options.subject,
    der,
    pem: toPem(der),
    x509: new X509Certificate(der),
    privateKey: keys.privateKey,
    publicKey: keys.publicKey,
  };
}

export interface TestPki {
  root: TestCert;
  intermediate: TestCert;
  leaf: TestCert;
  /** x5c header value (base64 DER, leaf first). */
  x5c: string[];
}

export interface TestPkiOptions {
  rootName?: string;
  leafMarker?: boolean;
  intermediateMarker?: boolean;
  leafValidity?: { notBefore: Date; notAfter: Date };
  intermediateValidity?: { notBefore: Date; notAfter: Date };
  rootValidity?: { notBefore: Date; notAfter: Date };
  leafIsCa?: boolean;
  intermediateIsCa?: boolean;
}

/** Root → intermediate (Apple intermediate marker) → leaf (Apple leaf marker). */
export function createTestPki(options: TestPkiOptions = {}): TestPki {
  const root = createCert({ subject: options.rootName ?? 'Test Root CA - G3', ca: true, ...options.rootValidity });
  const intermediate = createCert({
    subject: 'Test Worldwide Developer Relations CA - G6',
    issuer: root,
    ca: options.intermediateIsCa ?? true,
    markerOids: options.intermediateMarker === false ? [] : [APPLE_INTERMEDIATE_MARKER_OID],
    ...options.intermediateValidity,
  });
  const leaf = createCert({
    subject: 'Test Prod ECC Mac App Store and iTunes Store Receipt Signing',
    issuer: intermediate,
    ca: options.leafIsCa ?? false,
    markerOids: options.leafMarker === false ? [] : [APPLE_LEAF_MARKER_OID],
    ...options.leafValidity,
  });
  return { root, intermediate, leaf, x5c: [leaf, intermediate, root].map((c) => c.der.toString('base64')) };
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** ES256 JWS with an x5c header, signed by `key` (the leaf's private key by default). */
export async function signJws(
  payload: unknown,
  pki: TestPki,
  options: { x5c?: string[]; key?: KeyObject; header?: Record<string, unknown> } = {},
): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'ES256', x5c: options.x5c ?? pki.x5c, ...options.header } as { alg: string })
    .sign(options.key ?? pki.leaf.privateKey);
}

/** A JWS built by hand (for alg none / HS256 / RS256 and other malformed headers). */
export function rawJws(header: Record<string, unknown>, payload: unknown, signature: Buffer | string = ''): string {
  return `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}.${typeof signature === 'string' ? signature : b64url(signature)}`;
}

export const TEST_BUNDLE_ID = 'com.example.smarthome';

export interface NotificationSpec {
  notificationType: string;
  subtype?: string;
  notificationUUID?: string;
  signedDate?: number;
  environment?: 'Production' | 'Sandbox';
  bundleId?: string;
  transaction?: Record<string, unknown> | null;
  renewal?: Record<string, unknown> | null;
}

/** Signs a full notification: the nested transaction and renewal info are JWS signed with the same chain. */
export async function signNotification(pki: TestPki, spec: NotificationSpec): Promise<string> {
  const environment = spec.environment ?? 'Sandbox';
  const bundleId = spec.bundleId ?? TEST_BUNDLE_ID;
  const signedDate = spec.signedDate ?? Date.now();
  const data: Record<string, unknown> = { bundleId, environment, appAppleId: 1234567890, bundleVersion: '1.0' };
  if (spec.transaction) {
    data.signedTransactionInfo = await signJws(
      { bundleId, environment, signedDate, type: 'Auto-Renewable Subscription', ...spec.transaction },
      pki,
    );
  }
  if (spec.renewal) data.signedRenewalInfo = await signJws({ environment, signedDate, ...spec.renewal }, pki);
  return signJws(
    {
      notificationType: spec.notificationType,
      ...(spec.subtype ? { subtype: spec.subtype } : {}),
      notificationUUID: spec.notificationUUID ?? crypto.randomUUID(),
      version: '2.0',
      signedDate,
      data,
    },
    pki,
  );
}
