import fs from 'node:fs';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, importJWK, jwtVerify, type JWK, type CryptoKey } from 'jose';

const ALG = 'EdDSA';
const ISSUER = 'smarthome-cloud';
const AUDIENCE = 'smarthome-api';

/**
 * Signs and verifies access tokens. The Ed25519 key is generated once and kept in the
 * data dir (mode 0600); the algorithm is pinned on verification.
 */
export class AccessTokenSigner {
  private readonly keyFile: string;
  private readonly ttlSeconds: number;
  private privateKey: CryptoKey | null = null;
  private publicKey: CryptoKey | null = null;
  /** verified tokens until they expire: verifying the same JWT again gives the same answer */
  private readonly verified = new Map<string, { sub: string; exp: number }>();

  constructor(dataDir: string, ttlSeconds: number) {
    this.keyFile = path.join(dataDir, 'jwt-signing-key.json');
    this.ttlSeconds = ttlSeconds;
  }

  async start(): Promise<void> {
    let jwk: JWK;
    if (fs.existsSync(this.keyFile)) {
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

  async sign(userId: string): Promise<string> {
    if (!this.privateKey) throw new Error('signer not started');
    return new SignJWT({ typ: 'access' })
      .setProtectedHeader({ alg: ALG })
      .setSubject(userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.privateKey);
  }

  /** Returns the user id, or null for anything not a valid, unexpired access token of ours. */
  async verify(token: string): Promise<string | null> {
    if (!this.publicKey) throw new Error('signer not started');
    const hit = this.verified.get(token);
    if (hit) {
      if (hit.exp * 1000 > Date.now()) return hit.sub;
      this.verified.delete(token);
      return null;
    }
    try {
      const { payload } = await jwtVerify(token, this.publicKey, { algorithms: [ALG], issuer: ISSUER, audience: AUDIENCE });
      if (payload.typ !== 'access' || typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return null;
      if (this.verified.size >= 10_000) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, { sub: payload.sub, exp: payload.exp });
      return payload.sub;
    } catch {
      return null;
    }
  }
}
