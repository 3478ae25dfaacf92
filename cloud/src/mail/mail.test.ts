import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { createTestSchema, testDatabaseUrl } from '../testing/database.ts';
import { orgFixture } from '../testing/fixtures.ts';
import { SmtpSink, linkIn } from '../testing/mail.ts';
import { renderMail } from './templates.ts';

const FAST_QUEUE = { pollMs: 100, retryBaseMs: 100, maxAttempts: 50 };

async function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function inviteWithBranding(t: TestCloud, email: string) {
  const { admin, org } = await orgFixture(t, 'Acme <Homes>');
  const branding = await t.patch(`/v1/organizations/${org.id}/branding`, {
    token: admin.token,
    body: {
      branding: { logoUrl: 'https://acme.example/logo.png', color: '#ff6600' },
      inviteBranding: { headline: 'Welcome to Acme', primaryButtonLabel: 'Join Acme' },
    },
  });
  expect(branding.status).toBe(200);
  const res = await t.post(`/v1/organizations/${org.id}/invitations`, { token: admin.token, body: { email } });
  expect(res.status).toBe(201);
  return { admin, org, invitation: res.body as { id: string; token: string } };
}

const mailStatus = async (t: TestCloud, orgId: string, token: string, id: string) =>
  (
    (await t.get(`/v1/organizations/${orgId}/invitations`, { token })).body as { id: string; mail_status: string }[]
  ).find((i) => i.id === id)?.mail_status;

describe('outbound mail through a real SMTP server (smtp-server in its own process)', () => {
  const sink = new SmtpSink();
  let t: TestCloud;
  beforeAll(async () => {
    await sink.start(0);
    t = await startTestCloud({
      smtpUrl: sink.url,
      mailFrom: 'Acme Cloud <cloud@acme.example>',
      publicUrl: 'https://portal.example',
      mailQueue: FAST_QUEUE,
    });
  });
  afterAll(async () => {
    await t?.stop();
    await sink.stop();
  });

  it('sends an invitation over STARTTLS as text and HTML in the organization branding, linking to the portal page', async () => {
    const { admin, org, invitation } = await inviteWithBranding(t, 'Invitee@Example.test');
    const mail = await sink.waitFor('invitee@example.test');
    expect(mail.secure).toBe(true);
    expect(mail.from).toBe('cloud@acme.example');
    expect(mail.parsed.subject).toMatch(/invited you to Acme <Homes>$/);
    const link = linkIn(mail, 'https://portal.example/invitations/');
    expect(link.pathname).toBe(`/invitations/${invitation.id}`);
    expect(link.searchParams.get('token')).toBe(invitation.token);
    expect(mail.parsed.text).toContain('Welcome to Acme');
    const html = String(mail.parsed.html);
    expect(html).toContain('src="https://acme.example/logo.png"');
    expect(html).toContain('background:#ff6600');
    expect(html).toContain('>Join Acme</a>');
    expect(html).toContain('Acme &lt;Homes&gt;'); // escaped, never markup
    // The link works: the public invitation page answers for its token.
    expect((await t.get(`/v1/invitations/${link.searchParams.get('token')}`)).status).toBe(200);
    expect(
      await until('mail_status sent', async () => (await mailStatus(t, org.id, admin.token, invitation.id)) === 'sent'),
    ).toBe(true);
  });

  it('localises from Accept-Language (falls back to English)', async () => {
    const { admin, org } = await orgFixture(t);
    const res = await t.post(`/v1/organizations/${org.id}/invitations`, {
      token: admin.token,
      body: { email: 'fr@example.test' },
      headers: { 'accept-language': 'fr-CH, fr;q=0.9' },
    });
    expect(res.status).toBe(201);
    const mail = await sink.waitFor('fr@example.test');
    expect(mail.parsed.subject).toContain('invited you to');
  });

  it('sends each queued mail once when two replicas work the same queue', async () => {
    // A second replica on the same database (the same SQLite file, or the same PostgreSQL schema).
    const other = await startTestCloud(
      { smtpUrl: sink.url, mailQueue: FAST_QUEUE, databaseUrl: t.cloud.config.databaseUrl },
      { dataDir: t.dataDir },
    );
    try {
      const queues = [t.cloud.services.mail, other.cloud.services.mail];
      const n = 20;
      for (let i = 0; i < n; i++) {
        await queues[i % queues.length].enqueue({
          kind: 'mfa_changed',
          to: `r${i}@replicas.test`,
          ...renderMail('mfa_changed', 'en', { change: 'enabled', email: 'x', at: 'now' }),
        });
      }
      await until(
        'all delivered',
        async () => new Set(sink.received.flatMap((m) => m.to).filter((a) => a.endsWith('@replicas.test'))).size === n,
      );
      await new Promise((r) => setTimeout(r, 500));
      const counts = sink.received.flatMap((m) => m.to).filter((a) => a.endsWith('@replicas.test'));
      expect(counts).toHaveLength(n);
    } finally {
      await other.cloud.stop(); // not other.stop(): the data dir and schema are t's
    }
  });
});

describe('an SMTP outage loses nothing, across a cloud restart', () => {
  it('queues while the server is down, keeps it over a restart, delivers when it is back', async () => {
    const sink = new SmtpSink();
    await sink.start(0);
    const port = sink.port;
    await sink.stop();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-mail-'));
    const base = testDatabaseUrl();
    const schema = base ? await createTestSchema(base) : null;
    const config = { smtpUrl: sink.url, mailQueue: FAST_QUEUE, databaseUrl: schema?.url };
    try {
      const first = await startTestCloud(config, { dataDir });
      const { admin, org, invitation } = await inviteWithBranding(first, 'later@example.test');
      const row = await until('a failed attempt', async () =>
        first.sqlOne<{ status: string; attempts: number; last_error: string }>(
          'SELECT status, attempts, last_error FROM mail_outbox WHERE ref = ? AND attempts > 0 AND last_error IS NOT NULL',
          [`invitation:${invitation.id}`],
        ),
      );
      expect(row.status).toBe('queued');
      expect(await mailStatus(first, org.id, admin.token, invitation.id)).toBe('queued');
      await first.cloud.stop();

      const second = await startTestCloud(config, { dataDir });
      try {
        await sink.start(port);
        const mail = await sink.waitFor('later@example.test');
        expect(linkIn(mail, 'http://localhost:').searchParams.get('token')).toBe(invitation.token);
        expect(
          await until('sent', async () => (await mailStatus(second, org.id, admin.token, invitation.id)) === 'sent'),
        ).toBe(true);
        expect(sink.received.filter((m) => m.to.includes('later@example.test'))).toHaveLength(1);
      } finally {
        await second.cloud.stop();
      }
    } finally {
      await sink.stop();
      await schema?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('marks a mail failed after its attempts, and the sender sees it', async () => {
    const sink = new SmtpSink();
    await sink.start(0);
    await sink.stop();
    const t = await startTestCloud({ smtpUrl: sink.url, mailQueue: { pollMs: 50, retryBaseMs: 20, maxAttempts: 2 } });
    try {
      const { admin, org } = await orgFixture(t);
      const inv = (
        await t.post(`/v1/organizations/${org.id}/invitations`, {
          token: admin.token,
          body: { email: 'never@example.test' },
        })
      ).body as { id: string };
      expect(await until('failed', async () => (await mailStatus(t, org.id, admin.token, inv.id)) === 'failed')).toBe(
        true,
      );
      const row = await t.sqlOne<{ attempts: number }>('SELECT attempts FROM mail_outbox WHERE ref = ?', [
        `invitation:${inv.id}`,
      ]);
      expect(row?.attempts).toBe(2);
    } finally {
      await t.stop();
    }
  });
});

describe('the outbox default (no SMTP configured)', () => {
  it('writes each mail as an .eml file under <data-dir>/outbox/', async () => {
    const t = await startTestCloud();
    try {
      const { invitation } = await inviteWithBranding(t, 'outbox@example.test');
      const dir = path.join(t.dataDir, 'outbox');
      // Every mail is a file (the fixture's users got verification mails too): find the invitation.
      const { file, parsed } = await until('the invitation .eml file', async () => {
        if (!fs.existsSync(dir)) return null;
        for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.eml'))) {
          const mail = await simpleParser(fs.readFileSync(path.join(dir, f)));
          if (mail.to && !Array.isArray(mail.to) && mail.to.text === 'outbox@example.test')
            return { file: f, parsed: mail };
        }
        return null;
      });
      expect(parsed.subject).toMatch(/invited you to/);
      expect(linkIn(parsed, `http://localhost:${t.cloud.port}/invitations/`).searchParams.get('token')).toBe(
        invitation.token,
      );
      expect(fs.statSync(path.join(dir, file)).mode & 0o777).toBe(0o600);
    } finally {
      await t.stop();
    }
  });
});

describe('mail flags', () => {
  it('reads --smtp-url / SMTP_URL (flag wins), MAIL_FROM and --public-url, and refuses other schemes', async () => {
    const { parseCloudArgs } = await import('../config.ts');
    const c = parseCloudArgs(
      ['--smtp-url', 'smtps://u:p@mail.example:465', '--public-url', 'https://portal.example/'],
      { SMTP_URL: 'smtp://other', MAIL_FROM: 'Home <home@example.test>' },
    );
    expect(c.smtpUrl).toBe('smtps://u:p@mail.example:465');
    expect(c.mailFrom).toBe('Home <home@example.test>');
    expect(c.publicUrl).toBe('https://portal.example');
    expect(parseCloudArgs([], { SMTP_URL: 'smtp://relay.example:587' }).smtpUrl).toBe('smtp://relay.example:587');
    expect(parseCloudArgs([], {}).smtpUrl).toBeUndefined();
    expect(() => parseCloudArgs(['--smtp-url', 'http://mail.example'], {})).toThrow(
      /--smtp-url must be an smtp:\/\/ or smtps:\/\/ URL/,
    );
    expect(() => parseCloudArgs(['--public-url', 'portal.example'], {})).toThrow(
      /--public-url must be an http\(s\):\/\/ URL/,
    );
  });
});
