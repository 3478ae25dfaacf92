import { and, asc, desc, eq, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { CloudDatabase } from '../db/database.ts';
import type { Logger } from '../log.ts';
import { mailOutbox } from './tables.ts';
import type { MailTransport } from './transport.ts';
import type { MailKind, RenderedMail } from './templates.ts';

export type MailStatus = 'queued' | 'sent' | 'failed';

export interface QueuedMail extends RenderedMail {
  kind: MailKind;
  to: string;
  /** what the mail is about ("invitation:<id>"), for statusOf() */
  ref?: string;
}

export interface MailQueueDeps {
  database: CloudDatabase;
  transport: MailTransport;
  /** the From header (MAIL_FROM) */
  from: string;
  log: Logger;
  /** how often a worker looks for due mail besides being kicked (default 1 s) */
  pollMs?: number;
  /** the first retry waits this long, each further one twice as long, at most maxDelayMs (default 30 s) */
  retryBaseMs?: number;
  maxDelayMs?: number;
  /** attempts before a mail is marked failed (default 10, ≈ 3 h of retries at the defaults) */
  maxAttempts?: number;
  /** how long a claim holds: a replica that dies while sending lets another retry after it (default 2 min) */
  leaseMs?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The durable outbound mail queue (table mail_outbox). enqueue() is a plain insert, made in
 * the transaction of whatever caused the mail, so requests never wait for SMTP; a worker in
 * every replica sends due mail in the background. Rows are claimed with one conditional
 * UPDATE (a lease), so replicas never send the same row at the same time. Delivery is at
 * least once: a replica killed between the server's acceptance and the "sent" mark sends
 * that message again after the lease (with the same Message-ID).
 */
export class MailQueue {
  private readonly deps: Required<Omit<MailQueueDeps, 'transport'>> & { transport: MailTransport };
  private timer: NodeJS.Timeout | null = null;
  private draining: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  constructor(deps: MailQueueDeps) {
    this.deps = {
      pollMs: 1000,
      retryBaseMs: 30_000,
      maxDelayMs: 3_600_000,
      maxAttempts: 10,
      leaseMs: 120_000,
      ...deps,
    };
  }
  private get db() {
    return this.deps.database.db;
  }
  get transportDescription(): string {
    return this.deps.transport.description;
  }

  /** Queues a mail; call it inside the transaction that makes the mail true. Returns its id. */
  async enqueue(mail: QueuedMail): Promise<number> {
    const at = new Date().toISOString();
    const row = await this.db
      .insert(mailOutbox)
      .values({
        kind: mail.kind,
        ref: mail.ref ?? null,
        toAddress: mail.to,
        subject: mail.subject,
        textBody: mail.text,
        htmlBody: mail.html,
        status: 'queued',
        attempts: 0,
        nextAttemptAt: at,
        claimedUntil: null,
        lastError: null,
        createdAt: at,
        sentAt: null,
      })
      .returning({ id: mailOutbox.id })
      .get();
    // After the caller's transaction commits (a later turn), this worker looks at once.
    setTimeout(() => this.kick(), 0).unref();
    return row.id;
  }

  /** The status of the newest mail about each ref. */
  async statusOf(refs: string[]): Promise<Map<string, MailStatus>> {
    const out = new Map<string, MailStatus>();
    if (refs.length === 0) return out;
    const rows = await this.db
      .select({ ref: mailOutbox.ref, status: mailOutbox.status })
      .from(mailOutbox)
      .where(inArray(mailOutbox.ref, refs))
      .orderBy(desc(mailOutbox.id))
      .all();
    for (const r of rows) if (r.ref && !out.has(r.ref)) out.set(r.ref, r.status);
    return out;
  }

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.deps.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Looks for due mail now (one drain at a time per process). */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((err) =>
        this.deps.log.warn('mail queue: could not read the queue; retrying', { err: (err as Error).message }),
      )
      .finally(() => {
        this.draining = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /**
   * Stops looking. A send under way gets 2 s to finish and be marked; one that takes longer
   * (a slow SMTP server) is sent again by whichever replica claims it after its lease.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([
      this.draining,
      new Promise((resolve) => {
        bound = setTimeout(resolve, 2000);
      }),
    ]);
    clearTimeout(bound);
    this.deps.transport.close();
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const now = Date.now();
      const claimable = and(
        eq(mailOutbox.status, 'queued'),
        or(isNull(mailOutbox.claimedUntil), lt(mailOutbox.claimedUntil, iso(now))),
      );
      const due = await this.db
        .select({ id: mailOutbox.id })
        .from(mailOutbox)
        .where(and(claimable, lte(mailOutbox.nextAttemptAt, iso(now))))
        .orderBy(asc(mailOutbox.id))
        .limit(16)
        .all();
      if (due.length === 0) return;
      for (const { id } of due) {
        if (this.stopped) return;
        // The claim: one statement that only one replica can win (the row is re-checked under its lock).
        const [row] = await this.db
          .update(mailOutbox)
          .set({ claimedUntil: iso(Date.now() + this.deps.leaseMs), attempts: sql`${mailOutbox.attempts} + 1` })
          .where(and(eq(mailOutbox.id, id), claimable))
          .returning()
          .all();
        if (row) await this.send(row);
      }
    }
  }

  private async send(row: typeof mailOutbox.$inferSelect): Promise<void> {
    const { transport, from, log } = this.deps;
    try {
      await transport.send({
        from,
        to: row.toAddress,
        subject: row.subject,
        text: row.textBody,
        html: row.htmlBody,
        messageId: `<mail-${row.id}.${Date.parse(row.createdAt)}@${domainOf(from)}>`,
      });
    } catch (err) {
      const message = (err as Error).message ?? String(err);
      const failed = row.attempts >= this.deps.maxAttempts;
      const delay = Math.min(this.deps.retryBaseMs * 2 ** (row.attempts - 1), this.deps.maxDelayMs);
      await this.db
        .update(mailOutbox)
        .set({
          status: failed ? 'failed' : 'queued',
          claimedUntil: null,
          lastError: message.slice(0, 1000),
          nextAttemptAt: iso(Date.now() + delay),
        })
        .where(eq(mailOutbox.id, row.id));
      const fields = { id: row.id, kind: row.kind, attempt: row.attempts, err: message };
      if (failed) log.error('mail could not be sent: giving up', fields);
      else log.warn('mail not sent yet: will retry', { ...fields, retryInMs: delay });
      return;
    }
    await this.db
      .update(mailOutbox)
      .set({ status: 'sent', sentAt: new Date().toISOString(), claimedUntil: null, lastError: null })
      .where(eq(mailOutbox.id, row.id));
  }
}

function domainOf(address: string): string {
  const m = /@([A-Za-z0-9.-]+)>?\s*$/.exec(address);
  return m ? m[1] : 'localhost';
}
