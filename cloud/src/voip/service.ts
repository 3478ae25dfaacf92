import { and, asc, eq, isNull } from 'drizzle-orm';
import type { z } from 'zod';
import type { CreateVoipAccountBody, VoipAccount } from '@smarthome/protocol';
import { forbidden, notFound } from '@smarthome/protocol/server';
import type { Db } from '../db/database.ts';
import type { Scope } from '../orgs/scope.ts';
import { can } from '../authz/can.ts';
import { inScope } from '../authz/scope.ts';
import type { SecretBox } from './secret-box.ts';
import { voipAccounts, type VoipAccountRow } from './tables.ts';

/** The wire shape: everything but the password, which never leaves the service. */
export function toVoipAccount(r: VoipAccountRow): VoipAccount {
  return {
    id: r.id,
    name: r.name,
    server: r.server,
    domain: r.domain,
    port: r.port,
    transport: r.transport,
    username: r.username,
    display_name: r.displayName,
    user_id: r.userId,
    org_id: r.orgId,
    created_at: r.createdAt,
  };
}

export class VoipService {
  private readonly db: () => Db;
  private readonly box: SecretBox;
  constructor(db: () => Db, box: SecretBox) {
    this.db = db;
    this.box = box;
  }

  async create(scope: Scope, input: z.output<typeof CreateVoipAccountBody>): Promise<VoipAccount> {
    const row = await this.db()
      .insert(voipAccounts)
      .values({
        userId: scope.userId,
        orgId: scope.orgId,
        name: input.name,
        server: input.server,
        domain: input.domain ?? null,
        port: input.port,
        transport: input.transport,
        username: input.username,
        passwordEnc: this.box.encrypt(input.password),
        displayName: input.display_name ?? null,
        createdAt: new Date().toISOString(),
      })
      .returning()
      .get();
    return toVoipAccount(row);
  }

  async list(scope: Scope): Promise<VoipAccount[]> {
    const where = scope.orgId
      ? eq(voipAccounts.orgId, scope.orgId)
      : and(isNull(voipAccounts.orgId), eq(voipAccounts.userId, scope.userId));
    const rows = await this.db().select().from(voipAccounts).where(where).orderBy(asc(voipAccounts.id)).all();
    return rows.map(toVoipAccount);
  }

  /** 404 when unknown or outside the scope, 403 when can() does not allow deleting it (members, for others' accounts). */
  async remove(scope: Scope, id: number | null): Promise<void> {
    const row =
      id === null ? undefined : await this.db().select().from(voipAccounts).where(eq(voipAccounts.id, id)).get();
    if (!row || !inScope(row, scope)) throw notFound('voip account not found');
    const resource = { type: 'voip_account' as const, id: String(row.id), ownerId: row.userId, orgId: row.orgId };
    if (!(await can(this.db(), scope.userId, 'manage', resource))) throw forbidden();
    await this.db().delete(voipAccounts).where(eq(voipAccounts.id, row.id));
  }

  /** The SIP password, for whatever registers the account with its server (edges, calls). */
  async password(id: number): Promise<string | null> {
    const row = await this.db()
      .select({ enc: voipAccounts.passwordEnc })
      .from(voipAccounts)
      .where(eq(voipAccounts.id, id))
      .get();
    return row ? this.box.decrypt(row.enc) : null;
  }
}
