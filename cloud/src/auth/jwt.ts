import fs from 'node:fs';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, importJWK, jwtVerify, type JWK, type CryptoKey } from 'jose';

const ALG = 'EdDSA';

/** JWT_SIGNING_KEY: an Ed25519 private key as a JWK (what jwt-signing-key.json holds). */
export function parseSigningKey(text: string): JWK {
  let jwk: JWK;
  try {
    jwk = JSON.parse(text) as JWK;
  } catch {
    throw new Error('JWT_SIGNING_KEY must be a JSON Web Key (the content of a jwt-signing-key.json)');
  }
  if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string' || typeof jwk.x !== 'string') {
    throw new Error('JWT_SIGNING_KEY must be an Ed25519 private key (kty OKP, crv Ed25519, with d and x)');
  }
  return jwk;
}
const ISSUER = 'smarthome-cloud';

/** What a verified access token says. */
export interface AccessClaims {
  userId: string;
  /** the sign-in session (refresh-token family) it was issued for; null in tokens from before sessions had ids */
  sessionId: string | null;
  /** ms since the epoch (the exp claim) */
  expiresAt: number;
}
const AUDIENCE = 'smarthome-api';

/**
 * Signs and verifies access tokens. The Ed25519 key comes from JWT_SIGNING_KEY (a private JWK,
 * the same on every replica) or is generated once and kept in the data dir (mode 0600); the
 * algorithm is pinned on verification.
 */
export class AccessTokenSigner {
  private readonly keyFile: string;
  private readonly providedKey: JWK | null;
  private readonly ttlSeconds: number;
  private privateKey: CryptoKey | null = null;
  private publicKey: CryptoKey | null = null;
  /** verified tokens until they expire: verifying the same JWT again gives the same answer */
  private readonly verified = new Map<string, AccessClaims>();

  constructor(dataDir: string, ttlSeconds: number, providedKey: JWK | null = null) {
    this.keyFile = path.join(dataDir, 'jwt-signing-key.json');
    this.ttlSeconds = ttlSeconds;
    this.providedKey = providedKey;
  }

  async start(): Promise<void> {
    let jwk: JWK;
    if (this.providedKey) {
      jwk = this.providedKey;
    } else if (fs.existsSync(this.keyFile)) {
      jwk = JSON.parse(fs.readFileSync(this.keyFile, 'utf8')) as JWK;
    } else {
      const { privateKey } = await generateKeyPair(ALG, { crv: 'Ed25519', extractable: true });
      jwk = await exportJWK(privateKey);
      fs.mkdirSync(path.dirname(this.keyFile), { recursive: true });
      // wx: two processes starting at once must not overwrite each other's key.
      try {
        fs.writeFileSync(this.keyFile, JSON.stringify(jwk), { mode: 0o600, flag: 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        jwk = JSON.parse(fs.readFileSync(this.keyFile, 'utf8')) as JWK;
      }
    }
    this.privateKey = (await importJWK(jwk, ALG)) as CryptoKey;
    const { d: _d, ...publicJwk } = jwk;
    this.publicKey = (await importJWK(publicJwk, ALG)) as CryptoKey;
  }

  get expiresIn(): number {
    return this.ttlSeconds;
  }

  /** sessionId: the refresh-token family, so that revoking the family reaches its access tokens. */
  async sign(userId: string, sessionId: string): Promise<string> {
    if (!this.privateKey) throw new Error('signer not started');
    return new SignJWT({ typ: 'access', sid: sessionId })
      .setProtectedHeader({ alg: ALG })
      .setSubject(userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.privateKey);
  }

  /**
   * The token's claims, or null for anything not a valid, unexpired access token of ours.
   * Says nothing of revocation: that is the caller's to check.
   */
  async verify(token: string): Promise<AccessClaims | null> {
    if (!this.publicKey) throw new Error('signer not started');
    const hit = this.verified.get(token);
    if (hit) {
      if (hit.expiresAt > Date.now()) return hit;
      this.verified.delete(token);
      return null;
    }
    try {
      const { payload } = await jwtVerify(token, this.publicKey, {
        algorithms: [ALG],
        issuer: ISSUER,
        audience: AUDIENCE,
      });
      if (payload.typ !== 'access' || typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return null;
      if (this.verified.size >= 10_000) this.verified.delete(this.verified.keys().next().value!);
      const sessionId = typeof payload.sid === 'string' ? payload.sid : null;
      const claims: AccessClaims = Object.freeze({ userId: payload.sub, sessionId, expiresAt: payload.exp * 1000 });
      this.verified.set(token, claims);
      return claims;
    } catch {
      return null;
    }
  }
}
