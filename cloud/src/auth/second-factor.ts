import { randomBytes } from 'node:crypto';
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { CloudDatabase } from '../db/database.ts';
import { sha256 } from './secrets.ts';
import { mfaBackupCodes, users } from './tables.ts';
import { acceptCode, looksLikeTotp } from './totp.ts';

const BACKUP_CODE_COUNT = 10;

const now = () => new Date().toISOString();
const normalizeCode = (code: string) => code.trim().toLowerCase().replace(/[\s-]/g, '');

/**
 * The second factor of a sign-in: TOTP codes (each time step once) and MFA backup codes (each
 * code once). Verifying the caller before new codes are made is AuthService's.
 */
export class SecondFactor {
  private readonly database: CloudDatabase;
  constructor(database: CloudDatabase) {
    this.database = database;
  }
  private get db() {
    return this.database.db;
  }

  /** Replaces the user's backup codes; only their hashes are stored, so this is the one time they are seen. */
  async newBackupCodes(userId: string): Promise<string[]> {
    // 10 codes of 10 base32 characters: 50 bits each, enough against online guessing (throttled).
    const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, () => {
      const bytes = randomBytes(10);
      const chars = Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('');
      return `${chars.slice(0, 5)}-${chars.slice(5)}`;
    });
    const createdAt = now();
    await this.database.transaction(async () => {
      await this.db.delete(mfaBackupCodes).where(eq(mfaBackupCodes.userId, userId));
      await this.db
        .insert(mfaBackupCodes)
        .values(codes.map((code) => ({ userId, codeHash: sha256(normalizeCode(code)), createdAt })));
    });
    return codes;
  }

  /** A TOTP code (once per time step) or an unused backup code. */
  async accept(
    user: { id: string; totpSecret: string | null; totpLastStep: number | null },
    code: string,
  ): Promise<boolean> {
    if (user.totpSecret && looksLikeTotp(code)) {
      const step = acceptCode(user.totpSecret, code, user.totpLastStep === null ? null : Number(user.totpLastStep));
      if (step === null) return false;
      // Conditional, so two requests racing with the same code cannot both pass.
      const claimed = await this.db
        .update(users)
        .set({ totpLastStep: step })
        .where(and(eq(users.id, user.id), or(isNull(users.totpLastStep), lt(users.totpLastStep, step))))
        .returning({ id: users.id })
        .all();
      return claimed.length === 1;
    }
    return this.consumeBackupCode(user.id, code);
  }

  private async consumeBackupCode(userId: string, code: string): Promise<boolean> {
    const result = await this.db
      .update(mfaBackupCodes)
      .set({ usedAt: now() })
      .where(
        and(
          eq(mfaBackupCodes.userId, userId),
          eq(mfaBackupCodes.codeHash, sha256(normalizeCode(code))),
          isNull(mfaBackupCodes.usedAt),
        ),
      )
      .returning({ id: mfaBackupCodes.id })
      .all();
    return result.length === 1;
  }
}
