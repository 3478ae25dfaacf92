/**
 * Verification of App Store Server Notifications v2 (`signedPayload`) and the nested
 * `signedTransactionInfo` / `signedRenewalInfo` JWS.
 *
 * Every JWS goes through the same checks, in this order:
 *  1. compact JWS shape; protected header is JSON; `alg` is exactly ES256;
 *  2. `x5c` holds exactly three certificates (leaf, intermediate, root), each DER X.509;
 *  3. trust: the intermediate is issued and signed by a trusted root, and the x5c root
 *     either is a trusted root (SHA-256 fingerprint) or is issued and signed by one;
 *  4. the leaf is issued (issuer/subject chaining) and signed by the intermediate;
 *  5. CA flags: root and intermediate are CAs, the leaf is not;
 *  6. Apple's marker extensions: leaf 1.2.840.113635.100.6.11.1, intermediate 1.2.840.113635.100.6.2.1
 *     (read with @peculiar/asn1-x509, no hand-written ASN.1);
 *  7. validity dates of every certificate involved against `now()` ± 5 minutes;
 *  8. the JWS signature (jose compactVerify, ES256 only) with the leaf's public key;
 *  9. the decoded JSON against the protocol's zod schemas.
 * Then the notification's bundle id and environment must equal the configuration.
 *
 * Everything here is pure (no I/O) except `loadAppleRootCaG3()` / `createStoreVerifierFromEnv()`,
 * which read the shipped PEM and the configured bundle.
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import { NotificationPayload, RenewalInfo, TransactionInfo } from '@smarthome/protocol/store-iap';
import type { z } from 'zod';

export const APPLE_LEAF_MARKER_OID = '1.2.840.113635.100.6.11.1';
export const APPLE_INTERMEDIATE_MARKER_OID = '1.2.840.113635.100.6.2.1';
/** SHA-256 fingerprint of Apple Root CA - G3 (https://www.apple.com/certificateauthority/). */
export const APPLE_ROOT_CA_G3_SHA256 =
  '63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79';
export const DEFAULT_CLOCK_SKEW_MS = 5 * 60_000;

export type StoreEnvironment = 'Production' | 'Sandbox';

export type StoreVerificationReason =
  | 'malformed_jws'
  | 'alg_not_allowed'
  | 'missing_x5c'
  | 'x5c_length'
  | 'bad_certificate'
  | 'untrusted_root'
  | 'chain_issuer_mismatch'
  | 'chain_signature'
  | 'ca_flags'
  | 'missing_leaf_marker'
  | 'missing_intermediate_marker'
  | 'certificate_expired'
  | 'certificate_not_yet_valid'
  | 'bad_signature'
  | 'bad_payload'
  | 'bundle_id_mismatch'
  | 'environment_mismatch'
  | 'inconsistent_payload';

/** Any verification failure. `reason` is machine-readable; `where` says which JWS failed. */
export class StoreVerificationError extends Error {
  readonly reason: StoreVerificationReason;
  readonly where: 'signedPayload' | 'signedTransactionInfo' | 'signedRenewalInfo';
  constructor(
    reason: StoreVerificationReason,
    where: StoreVerificationError['where'],
    detail?: string,
    cause?: unknown,
  ) {
    super(`${where}: ${reason}${detail ? ` (${detail})` : ''}`, { cause });
    this.name = 'StoreVerificationError';
    this.reason = reason;
    this.where = where;
  }
}

/** Misconfiguration (no trusted roots, a trusted root that is not a CA, bad environment…). */
export class StoreVerifierConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreVerifierConfigError';
  }
}

export interface StoreVerifierOptions {
  /** Trusted roots: X509Certificate objects or PEM strings (a string may hold a bundle of several). */
  roots?: Array<X509Certificate | string>;
  /** Also trust the shipped Apple Root CA - G3 (default true). */
  includeAppleRootCaG3?: boolean;
  bundleId: string;
  environment: StoreEnvironment;
  now?: () => Date;
  clockSkewMs?: number;
}

export interface VerifiedNotification {
  payload: NotificationPayload;
  transaction?: TransactionInfo;
  renewal?: RenewalInfo;
}

export interface StoreVerifier {
  verifyNotification(signedPayload: unknown): Promise<VerifiedNotification>;
  /** The trusted roots in use (for diagnostics). */
  readonly roots: readonly X509Certificate[];
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Parses every certificate in a PEM bundle. Throws StoreVerifierConfigError if there is none or one is invalid. */
export function parsePemBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERT) ?? [];
  if (blocks.length === 0) throw new StoreVerifierConfigError('PEM bundle holds no certificate');
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      throw new StoreVerifierConfigError(`PEM bundle: certificate #${i + 1} is invalid: ${(err as Error).message}`);
    }
  });
}

let appleRootCache: X509Certificate | undefined;
/** The shipped Apple Root CA - G3 (apple-root-ca-g3.pem beside this file), checked against its known fingerprint. */
export function loadAppleRootCaG3(): X509Certificate {
  if (appleRootCache) return appleRootCache;
  const pem = readFileSync(new URL('./apple-root-ca-g3.pem', import.meta.url), 'utf8');
  const [cert] = parsePemBundle(pem);
  if (cert.fingerprint256 !== APPLE_ROOT_CA_G3_SHA256) {
    throw new StoreVerifierConfigError(
      `apple-root-ca-g3.pem is not Apple Root CA - G3 (fingerprint ${cert.fingerprint256})`,
    );
  }
  appleRootCache = cert;
  return cert;
}

/** The cloud config fields (cloud/src/config.ts) the verifier needs. */
export interface StoreIapConfig {
  storeIapRootsFile?: string;
  storeIapBundleId?: string;
  storeIapEnvironment: string;
}

/** Options from the cloud config: extra roots file (PEM bundle), bundle id, environment. Reads the roots file. */
export function storeVerifierOptionsFromConfig(config: StoreIapConfig): StoreVerifierOptions {
  const environment = config.storeIapEnvironment;
  if (environment !== 'Production' && environment !== 'Sandbox') {
    throw new StoreVerifierConfigError(`STORE_IAP_ENVIRONMENT must be Production or Sandbox, not ${environment}`);
  }
  if (!config.storeIapBundleId) throw new StoreVerifierConfigError('STORE_IAP_BUNDLE_ID is not set');
  const roots = config.storeIapRootsFile ? [readFileSync(config.storeIapRootsFile, 'utf8')] : [];
  return { roots, bundleId: config.storeIapBundleId, environment };
}

/** Options straight from the environment: STORE_IAP_ROOTS_FILE, STORE_IAP_BUNDLE_ID, STORE_IAP_ENVIRONMENT (default Production). */
export function storeVerifierOptionsFromEnv(
  env: Record<string, string | undefined> = process.env,
): StoreVerifierOptions {
  return storeVerifierOptionsFromConfig({
    storeIapRootsFile: env.STORE_IAP_ROOTS_FILE || undefined,
    storeIapBundleId: env.STORE_IAP_BUNDLE_ID || undefined,
    storeIapEnvironment: env.STORE_IAP_ENVIRONMENT ?? 'Production',
  });
}

export function createStoreVerifierFromEnv(env: Record<string, string | undefined> = process.env): StoreVerifier {
  return createStoreVerifier(storeVerifierOptionsFromEnv(env));
}

function certificateExtensionOids(der: Buffer): Set<string> {
  const cert = AsnConvert.parse(der, Certificate);
  return new Set((cert.tbsCertificate.extensions ?? []).map((e) => e.extnID));
}

function isIssuedAndSignedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

type Where = StoreVerificationError['where'];

export function createStoreVerifier(options: StoreVerifierOptions): StoreVerifier {
  if (options.environment !== 'Production' && options.environment !== 'Sandbox') {
    throw new StoreVerifierConfigError(`environment must be Production or Sandbox, not ${String(options.environment)}`);
  }
  if (!options.bundleId) throw new StoreVerifierConfigError('bundleId is required');
  const roots: X509Certificate[] = [];
  if (options.includeAppleRootCaG3 ?? true) roots.push(loadAppleRootCaG3());
  for (const root of options.roots ?? []) roots.push(...(typeof root === 'string' ? parsePemBundle(root) : [root]));
  if (roots.length === 0) throw new StoreVerifierConfigError('no trusted roots configured');
  for (const root of roots) {
    if (!root.ca) throw new StoreVerifierConfigError(`trusted root ${root.subject} is not a CA certificate`);
  }
  const fingerprints = new Set(roots.map((r) => r.fingerprint256));
  const now = options.now ?? (() => new Date());
  const skew = options.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS;

  function checkValidity(cert: X509Certificate, at: number, where: Where, role: string) {
    // validFromDate/validToDate are Node >= 22.10; the string forms parse everywhere.
    const from = (cert.validFromDate as Date | undefined) ?? new Date(cert.validFrom);
    const to = (cert.validToDate as Date | undefined) ?? new Date(cert.validTo);
    if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()))
      throw new StoreVerificationError('bad_certificate', where, `${role} validity`);
    if (at + skew < from.getTime()) throw new StoreVerificationError('certificate_not_yet_valid', where, role);
    if (at - skew > to.getTime()) throw new StoreVerificationError('certificate_expired', where, role);
  }

  async function verifyJws<S extends z.ZodType>(jws: unknown, where: Where, schema: S): Promise<z.infer<S>> {
    if (typeof jws !== 'string' || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(jws)) {
      throw new StoreVerificationError('malformed_jws', where);
    }
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(jws);
    } catch (err) {
      throw new StoreVerificationError('malformed_jws', where, 'protected header', err);
    }
    if (header.alg !== 'ES256') throw new StoreVerificationError('alg_not_allowed', where, String(header.alg));
    const x5c = header.x5c;
    if (!Array.isArray(x5c)) throw new StoreVerificationError('missing_x5c', where);
    if (x5c.length !== 3) throw new StoreVerificationError('x5c_length', where, `${x5c.length} certificates`);
    const ders: Buffer[] = [];
    const chain: X509Certificate[] = [];
    for (const [i, entry] of x5c.entries()) {
      if (typeof entry !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(entry))
        throw new StoreVerificationError('bad_certificate', where, `x5c[${i}]`);
      const der = Buffer.from(entry, 'base64');
      try {
        chain.push(new X509Certificate(der));
        ders.push(der);
      } catch (err) {
        throw new StoreVerificationError('bad_certificate', where, `x5c[${i}]`, err);
      }
    }
    const [leaf, intermediate, root] = chain;

    // Trust anchor: the intermediate must be issued and signed by a trusted root…
    const anchor = roots.find((r) => isIssuedAndSignedBy(intermediate, r));
    if (!anchor) throw new StoreVerificationError('untrusted_root', where, 'intermediate not signed by a trusted root');
    // …and the chain's own root must be a trusted root or be signed by one.
    if (!fingerprints.has(root.fingerprint256) && !roots.some((r) => isIssuedAndSignedBy(root, r))) {
      throw new StoreVerificationError('untrusted_root', where, 'x5c root is not trusted');
    }
    if (!leaf.checkIssued(intermediate))
      throw new StoreVerificationError('chain_issuer_mismatch', where, 'leaf issuer ≠ intermediate subject');
    let leafSigned = false;
    try {
      leafSigned = leaf.verify(intermediate.publicKey);
    } catch {
      leafSigned = false;
    }
    if (!leafSigned) throw new StoreVerificationError('chain_signature', where, 'leaf not signed by intermediate');
    if (!root.ca || !intermediate.ca || !anchor.ca)
      throw new StoreVerificationError('ca_flags', where, 'root/intermediate must be CA');
    if (leaf.ca) throw new StoreVerificationError('ca_flags', where, 'leaf must not be a CA');

    let leafOids: Set<string>;
    let intermediateOids: Set<string>;
    try {
      leafOids = certificateExtensionOids(ders[0]);
      intermediateOids = certificateExtensionOids(ders[1]);
    } catch (err) {
      throw new StoreVerificationError('bad_certificate', where, 'extensions', err);
    }
    if (!leafOids.has(APPLE_LEAF_MARKER_OID)) throw new StoreVerificationError('missing_leaf_marker', where);
    if (!intermediateOids.has(APPLE_INTERMEDIATE_MARKER_OID))
      throw new StoreVerificationError('missing_intermediate_marker', where);

    const at = now().getTime();
    checkValidity(leaf, at, where, 'leaf');
    checkValidity(intermediate, at, where, 'intermediate');
    checkValidity(root, at, where, 'root');
    checkValidity(anchor, at, where, 'trusted root');

    let bytes: Uint8Array;
    try {
      ({ payload: bytes } = await compactVerify(jws, leaf.publicKey, { algorithms: ['ES256'] }));
    } catch (err) {
      throw new StoreVerificationError('bad_signature', where, undefined, err);
    }
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch (err) {
      throw new StoreVerificationError('bad_payload', where, 'not JSON', err);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new StoreVerificationError('bad_payload', where, parsed.error.issues[0]?.message);
    return parsed.data;
  }

  function checkApp(where: Where, bundleId: unknown, environment: unknown, required: boolean) {
    if ((required || bundleId !== undefined) && bundleId !== options.bundleId) {
      throw new StoreVerificationError('bundle_id_mismatch', where, String(bundleId));
    }
    if ((required || environment !== undefined) && environment !== options.environment) {
      throw new StoreVerificationError('environment_mismatch', where, String(environment));
    }
  }

  async function verifyNotification(signedPayload: unknown): Promise<VerifiedNotification> {
    const payload = await verifyJws(signedPayload, 'signedPayload', NotificationPayload);
    checkApp(
      'signedPayload',
      payload.data?.bundleId ?? payload.summary?.bundleId,
      payload.data?.environment ?? payload.summary?.environment,
      true,
    );
    const result: VerifiedNotification = { payload };
    if (payload.data?.signedTransactionInfo !== undefined) {
      const transaction = await verifyJws(payload.data.signedTransactionInfo, 'signedTransactionInfo', TransactionInfo);
      checkApp('signedTransactionInfo', transaction.bundleId, transaction.environment, false);
      result.transaction = transaction;
    }
    if (payload.data?.signedRenewalInfo !== undefined) {
      const renewal = await verifyJws(payload.data.signedRenewalInfo, 'signedRenewalInfo', RenewalInfo);
      checkApp('signedRenewalInfo', undefined, renewal.environment, false);
      if (
        result.transaction &&
        renewal.originalTransactionId !== undefined &&
        renewal.originalTransactionId !== result.transaction.originalTransactionId
      ) {
        throw new StoreVerificationError(
          'inconsistent_payload',
          'signedRenewalInfo',
          'originalTransactionId differs from the transaction',
        );
      }
      result.renewal = renewal;
    }
    return result;
  }

  return { verifyNotification, roots };
}
