/**
 * Signed media URLs: an HS256 JWT (jose) naming provider and path, valid for a short time
 * (default 5 minutes). The key comes from the edge's configuration.
 */
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { forbidden } from '@smarthome/protocol/server';
import { isSafeSegment } from './uri.ts';

export const DEFAULT_URL_TTL_SECONDS = 300;
const AUDIENCE = 'smarthome-edge-media';

export interface SignedTarget {
  provider: string;
  segments: string[];
}

export class MediaUrlSigner {
  private readonly key: Uint8Array;
  private readonly ttlSeconds: number;
  private readonly now: () => number;

  constructor(key: Uint8Array | string, ttlSeconds = DEFAULT_URL_TTL_SECONDS, now: () => number = Date.now) {
    this.key = typeof key === 'string' ? new TextEncoder().encode(key) : key;
    if (this.key.byteLength < 32) throw new Error('media signing key must be at least 32 bytes');
    this.ttlSeconds = ttlSeconds;
    this.now = now;
  }

  /** token and its expiry (ms since the epoch) */
  async sign(target: SignedTarget): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + this.ttlSeconds;
    const token = await new SignJWT({ prv: target.provider, pth: target.segments })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt: exp * 1000 };
  }

  /** The target named by a valid token; an expired or tampered token is a 403. */
  async verify(token: string): Promise<SignedTarget> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        audience: AUDIENCE,
        currentDate: new Date(this.now()),
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw forbidden('signature_expired');
      throw forbidden('invalid_signature');
    }
    const { prv, pth } = payload;
    if (
      typeof prv !== 'string' ||
      !Array.isArray(pth) ||
      !pth.every((s) => typeof s === 'string' && isSafeSegment(s))
    ) {
      throw forbidden('invalid_signature');
    }
    return { provider: prv, segments: pth as string[] };
  }
}
