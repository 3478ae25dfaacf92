import { randomUUID } from 'node:crypto';
import { and, desc, eq } from 'drizzle-orm';
import { normalizeEmail, type Branding, type InviteBranding, type OrgRole } from '@smarthome/protocol';
import { conflict, forbidden, notFound } from '@smarthome/protocol/server';
import type { CloudDatabase } from '../db/database.ts';
import { users } from '../auth/tables.ts';
import { claimRefusal } from '../auth/claim.ts';
import { newSecret, sha256 } from '../auth/secrets.ts';
import { orgMembers, organizations } from './tables.ts';
import { invitations } from './invitations-table.ts';
import { membership, requireOrgRole } from './scope.ts';
import { toOrganization } from './service.ts';
import type { MailQueue, MailStatus } from '../mail/queue.ts';
import { renderMail } from '../mail/templates.ts';

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
const TOKEN_PREFIX = 'shp_inv';

type InvitationRow = typeof invitations.$inferSelect;
type Status = 'pending' | 'accepted' | 'declined' | 'expired' | 'revoked';

export interface InvitationSummaryOut {
  id: string;
  email: string;
  role: OrgRole;
  status: Status;
  expires_at: string;
  created_at: string;
  mail_status: MailStatus | null;
}

export interface InvitationPageOut {
  organization: { id: string; name: string; description: string | null };
  branding: Branding;
  inviteBranding: InviteBranding;
  email: string;
  role: OrgRole;
}

/**
 * Invitations into an organization. The token (256 random bits) is returned once by create
 * and stored as its SHA-256. A token that is unknown, expired, revoked, declined or already accepted
 * answers 404 everywhere, so the public page reveals nothing about used tokens.
 */
export class InvitationService {
  private readonly database: CloudDatabase;
  private readonly ttlMs: number;
  private readonly now: () => Date;
  private readonly mail: MailQueue | null;
  private readonly publicUrl: () => string;
  constructor(deps: {
    database: CloudDatabase;
    mail?: MailQueue;
    publicUrl?: () => string;
    ttlMs?: number;
    now?: () => Date;
  }) {
    this.database = deps.database;
    this.mail = deps.mail ?? null;
    this.publicUrl = deps.publicUrl ?? (() => 'http://localhost');
    this.ttlMs = deps.ttlMs ?? INVITATION_TTL_MS;
    this.now = deps.now ?? (() => new Date());
  }
  private get db() {
    return this.database.db;
  }

  private statusOf(row: InvitationRow): Status {
    if (row.status === 'pending' && row.expiresAt <= this.now().toISOString()) return 'expired';
    return row.status;
  }

  /** Admin only. Inviting an existing member answers 409; a new invitation replaces an earlier pending one for the same e-mail. */
  async create(callerId: string, orgId: string, input: { email: string; role: OrgRole }, locale = 'en') {
    await requireOrgRole(this.db, orgId, callerId, 'admin');
    const email = normalizeEmail(input.email);
    const token = newSecret(TOKEN_PREFIX);
    const at = this.now();
    const row: InvitationRow = {
      id: randomUUID(),
      orgId,
      email,
      role: input.role,
      status: 'pending',
      tokenHash: sha256(token),
      invitedBy: callerId,
      expiresAt: new Date(at.getTime() + this.ttlMs).toISOString(),
      acceptedBy: null,
      acceptedAt: null,
      createdAt: at.toISOString(),
    };
    await this.database.transaction(async () => {
      const existing = await this.db.select({ id: users.id }).from(users).where(eq(users.email, email)).get();
      if (existing && (await membership(this.db, orgId, existing.id)))
        throw conflict('already a member of this organization');
      await this.db
        .update(invitations)
        .set({ status: 'revoked' })
        .where(and(eq(invitations.orgId, orgId), eq(invitations.email, email), eq(invitations.status, 'pending')));
      await this.db.insert(invitations).values(row);
      // In the same transaction: the mail exists exactly when the invitation does.
      await this.queueMail(row, token, locale);
    });
    return { id: row.id, email, role: row.role, status: 'pending' as const, token, expires_at: row.expiresAt };
  }

  /** The invitation mail, in the organization's branding, linking to the portal's invitation page. */
  private async queueMail(row: InvitationRow, token: string, locale: string): Promise<void> {
    if (!this.mail) return;
    const orgRow = await this.db.select().from(organizations).where(eq(organizations.id, row.orgId)).get();
    const inviter = await this.db
      .select({ name: users.name, email: users.email })
      .from(users)
      .where(eq(users.id, row.invitedBy))
      .get();
    if (!orgRow) return;
    const org = toOrganization(orgRow);
    const link = `${this.publicUrl()}/invitations/${encodeURIComponent(row.id)}?token=${encodeURIComponent(token)}`;
    const rendered = renderMail(
      'invitation',
      locale,
      {
        inviter: inviter?.name || inviter?.email || 'Someone',
        org: org.name,
        email: row.email,
        role: row.role,
        expires: row.expiresAt.slice(0, 10),
        headline: org.inviteBranding.headline ?? '',
        button: org.inviteBranding.primaryButtonLabel || 'Accept the invitation',
      },
      { link, branding: { name: org.name, logoUrl: org.branding.logoUrl, color: org.branding.color } },
    );
    await this.mail.enqueue({ kind: 'invitation', ref: `invitation:${row.id}`, to: row.email, ...rendered });
  }

  async list(callerId: string, orgId: string): Promise<InvitationSummaryOut[]> {
    await requireOrgRole(this.db, orgId, callerId, 'admin');
    const rows = await this.db
      .select()
      .from(invitations)
      .where(eq(invitations.orgId, orgId))
      .orderBy(desc(invitations.createdAt), desc(invitations.id))
      .all();
    const mail = this.mail
      ? await this.mail.statusOf(rows.map((r) => `invitation:${r.id}`))
      : new Map<string, MailStatus>();
    return rows.map((r) => ({
      id: r.id,
      email: r.email,
      role: r.role,
      status: this.statusOf(r),
      expires_at: r.expiresAt,
      created_at: r.createdAt,
      mail_status: mail.get(`invitation:${r.id}`) ?? null,
    }));
  }

  /** Admin only. Only a pending invitation can be revoked; anything else (or another org's) is 404. */
  async revoke(callerId: string, orgId: string, invitationId: string): Promise<void> {
    await requireOrgRole(this.db, orgId, callerId, 'admin');
    const row = await this.db
      .select()
      .from(invitations)
      .where(and(eq(invitations.id, invitationId), eq(invitations.orgId, orgId)))
      .get();
    if (!row || this.statusOf(row) !== 'pending') throw notFound('invitation not found');
    await this.db.update(invitations).set({ status: 'revoked' }).where(eq(invitations.id, row.id));
  }

  private async pendingByToken(token: string): Promise<InvitationRow> {
    const row = await this.db
      .select()
      .from(invitations)
      .where(eq(invitations.tokenHash, sha256(token)))
      .get();
    if (!row || this.statusOf(row) !== 'pending') throw notFound('invitation not found or no longer valid');
    return row;
  }

  /** Public: what the invitation page shows. */
  async page(token: string): Promise<InvitationPageOut> {
    const row = await this.pendingByToken(token);
    const orgRow = await this.db.select().from(organizations).where(eq(organizations.id, row.orgId)).get();
    if (!orgRow) throw notFound('invitation not found or no longer valid');
    const org = toOrganization(orgRow);
    return {
      organization: { id: org.id, name: org.name, description: org.description },
      branding: org.branding,
      inviteBranding: org.inviteBranding,
      email: row.email,
      role: row.role,
    };
  }

  /** The invited account (the rule of accept), else 403 with the reason; the caller holds the token and the public page shows the address, so naming it leaks nothing. */
  private async requireInvitee(callerId: string, row: InvitationRow): Promise<void> {
    const user = await this.db
      .select({ email: users.email, emailVerified: users.emailVerified })
      .from(users)
      .where(eq(users.id, callerId))
      .get();
    const refusal = user ? claimRefusal(user, { email: row.email }) : 'address_mismatch';
    if (refusal === 'address_mismatch') throw forbidden('invitation_email_mismatch');
    if (refusal === 'email_not_verified') throw forbidden('email_not_verified');
  }

  /**
   * Only the invited account may decline (as for accept: anyone else holding the link could
   * otherwise spoil it). The invitation ends as 'declined': the token answers 404 from then on,
   * and the admins' list shows it.
   */
  async decline(callerId: string, token: string): Promise<void> {
    await this.database.transaction(async () => {
      const row = await this.pendingByToken(token);
      await this.requireInvitee(callerId, row);
      await this.db.update(invitations).set({ status: 'declined' }).where(eq(invitations.id, row.id));
    });
  }

  /**
   * The caller's e-mail must equal the invited one and be verified (403 either way: see
   * mayClaim). Creates the membership and marks
   * the invitation accepted in one transaction, so a token works once (then 404).
   */
  async accept(
    callerId: string,
    token: string,
  ): Promise<{ organization: { id: string; name: string }; role: OrgRole }> {
    return this.database.transaction(async () => {
      const row = await this.pendingByToken(token);
      await this.requireInvitee(callerId, row);
      const org = await this.db
        .select({ id: organizations.id, name: organizations.name })
        .from(organizations)
        .where(eq(organizations.id, row.orgId))
        .get();
      if (!org) throw notFound('invitation not found or no longer valid');
      if (await membership(this.db, row.orgId, callerId)) throw conflict('already a member of this organization');
      const at = this.now().toISOString();
      await this.db.insert(orgMembers).values({ orgId: row.orgId, userId: callerId, role: row.role, joinedAt: at });
      await this.db
        .update(invitations)
        .set({ status: 'accepted', acceptedBy: callerId, acceptedAt: at })
        .where(eq(invitations.id, row.id));
      return { organization: org, role: row.role };
    });
  }
}
