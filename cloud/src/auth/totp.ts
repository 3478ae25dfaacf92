import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

/** RFC 6238 as authenticator apps use it: HMAC-SHA1, 6 digits, 30-second steps. */
const PERIOD = 30;
const DIGITS = 6;
/** codes of the step before and after are accepted too (clock skew of ±30 s) */
const WINDOW = 1;

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secret: string, label = '', issuer = 'Smart Home'): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD,
    secret: Secret.fromBase32(secret),
  });
}

/** The otpauth:// URI and its QR code (SVG) for an authenticator app. */
export async function enrolment(
  secret: string,
  account: string,
  issuer: string,
): Promise<{ uri: string; svg: string }> {
  const uri = totp(secret, account, issuer).toString();
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { uri, svg };
}

/**
 * The time step a code belongs to, if it is valid now (±1 step) and later than `lastStep`
 * (a code, once used, is refused: replay), else null.
 */
export function acceptCode(secret: string, code: string, lastStep: number | null, now = Date.now()): number | null {
  const token = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totp(secret).validate({ token, timestamp: now, window: WINDOW });
  if (delta === null) return null;
  const step = Math.floor(now / 1000 / PERIOD) + delta;
  return lastStep !== null && step <= lastStep ? null : step;
}

export const looksLikeTotp = (code: string) => /^\d{6}$/.test(code.replace(/\s/g, ''));
