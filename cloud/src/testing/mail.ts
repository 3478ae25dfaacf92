import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { simpleParser, type ParsedMail } from 'mailparser';
import { NODE } from './process.ts';

export interface ReceivedMail {
  from: string | null;
  to: string[];
  /** the session used STARTTLS */
  secure: boolean;
  parsed: ParsedMail;
}

/** A real SMTP server in a child process (smtp-sink.ts); collects what it receives. */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  private child: ChildProcess | null = null;
  private waiters: (() => void)[] = [];
  port = 0;

  /** Starts (again) on `port` (0: any free port, kept for later restarts). */
  async start(port = this.port): Promise<void> {
    const child = spawn(NODE, [path.join(import.meta.dirname, 'smtp-sink.ts'), String(port)], {
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    this.child = child;
    child.on('message', (m: { from: string | null; to: string[]; secure: boolean; raw: string }) => {
      void simpleParser(Buffer.from(m.raw, 'base64')).then((parsed) => {
        this.received.push({ from: m.from, to: m.to, secure: m.secure, parsed });
        for (const w of this.waiters.splice(0)) w();
      });
    });
    this.port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('smtp sink did not start')), 15_000);
      readline.createInterface({ input: child.stdout! }).on('line', (line) => {
        const m = /^ready (\{.*\})$/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve((JSON.parse(m[1]) as { smtp: number }).smtp);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`smtp sink exited ${code}`));
      });
    });
  }

  /** smtp:// with STARTTLS required (the default) and the sink's self-signed certificate accepted. */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}?tls.rejectUnauthorized=false`;
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** The first received mail to `to` that `match` accepts, waiting up to `timeoutMs`. */
  async waitFor(
    to: string,
    match: (m: ReceivedMail) => boolean = () => true,
    timeoutMs = 15_000,
  ): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find((m) => m.to.includes(to) && match(m));
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(
          `no mail to ${to} within ${timeoutMs} ms (got ${this.received.map((m) => m.to.join(',')).join('; ')})`,
        );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

/** The first link in a mail's plain text that starts with `prefix`. */
export function linkIn(mail: ReceivedMail | ParsedMail, prefix: string): URL {
  const text = ('parsed' in mail ? mail.parsed : mail).text ?? '';
  const found = text.split(/\s+/).find((w) => w.startsWith(prefix));
  if (!found) throw new Error(`no link ${prefix}… in: ${text}`);
  return new URL(found);
}

/**
 * The token of the newest link to `page` (e.g. "/verify-email") in a mail to `to` that a cloud
 * without SMTP wrote to `<data-dir>/outbox/` (any of `dataDirs`: replicas may each have one).
 */
export async function outboxToken(dataDirs: string[], to: string, page: string, timeoutMs = 15_000): Promise<string> {
  const fs = await import('node:fs');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const dir of dataDirs.map((d) => path.join(d, 'outbox'))) {
      if (!fs.existsSync(dir)) continue;
      for (const f of fs
        .readdirSync(dir)
        .filter((n) => n.endsWith('.eml'))
        .sort()
        .reverse()) {
        const mail = await simpleParser(fs.readFileSync(path.join(dir, f)));
        if (!mail.to || Array.isArray(mail.to) || mail.to.text !== to) continue;
        const word = (mail.text ?? '').split(/\s+/).find((w) => w.includes(`${page}?token=`));
        if (word) return new URL(word).searchParams.get('token') as string;
      }
    }
    if (Date.now() > deadline) throw new Error(`no ${page} mail to ${to} in the outbox`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
