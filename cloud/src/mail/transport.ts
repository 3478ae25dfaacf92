import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Mail } from 'nodemailer';
import type { Logger } from '../log.ts';

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** stable per queued mail, so a resend after a lost answer can be recognised by the receiver */
  messageId: string;
}

/** Where mail leaves the cloud: an SMTP server, or the outbox directory. */
export interface MailTransport {
  readonly description: string;
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** Errors waiting for an answer stay short: a worker holds a lease while it sends. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/**
 * SMTP through nodemailer. smtp:// requires STARTTLS unless the URL says otherwise
 * (`?requireTLS=false` or `?ignoreTLS=true`); smtps:// is TLS from the start. Other query
 * parameters are nodemailer's (e.g. `tls.rejectUnauthorized=false` for a self-signed test server).
 */
export class SmtpTransport implements MailTransport {
  readonly description: string;
  private readonly transporter: Mail;
  constructor(url: string) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:')
      throw new Error('--smtp-url must be an smtp:// or smtps:// URL');
    // Options from the URL win over these defaults (nodemailer merges them last).
    this.transporter = nodemailer.createTransport({ url, requireTLS: parsed.protocol === 'smtp:', ...SMTP_TIMEOUTS });
    this.description = `${parsed.protocol}//${parsed.host}`;
  }
  async send(mail: OutgoingMail): Promise<void> {
    await this.transporter.sendMail(mail);
  }
  close(): void {
    this.transporter.close();
  }
}

/**
 * No SMTP configured: each message becomes an .eml file in `dir` (readable by any mail
 * program) and one log line with its path, so a developer sees the links.
 */
export class OutboxTransport implements MailTransport {
  readonly description: string;
  private readonly dir: string;
  private readonly log: Logger;
  private readonly composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  constructor(dir: string, log: Logger) {
    this.dir = dir;
    this.log = log;
    this.description = `outbox ${dir}`;
  }
  async send(mail: OutgoingMail): Promise<void> {
    const info = await this.composer.sendMail(mail);
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const safeId = mail.messageId.replace(/[^A-Za-z0-9.@_-]/g, '_');
    const file = path.join(this.dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${safeId}.eml`);
    // Written whole, then renamed: a reader never sees half a message.
    await fs.writeFile(`${file}.tmp`, info.message as Buffer, { mode: 0o600 });
    await fs.rename(`${file}.tmp`, file);
    this.log.info('mail written to the outbox', { to: mail.to, subject: mail.subject, path: file });
  }
  close(): void {}
}
