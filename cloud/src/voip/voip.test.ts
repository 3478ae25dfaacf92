import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { onPostgres } from '../testing/database.ts';
import { makeOrg } from '../testing/fixtures.ts';
import { SecretBox } from './secret-box.ts';
import { voipKeyFile } from './routes.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

const sip = { name: 'Front door', server: 'sip.example.test', username: 'door', password: 'S3cret-sip-pass' };
const storedPassword = async (id: number) =>
  (await t.sqlOne<{ password_enc: string }>('SELECT password_enc FROM voip_accounts WHERE id = ?', [id]))
    ?.password_enc as string;

describe('POST /v1/voip-accounts', () => {
  it('creates with defaults, never returns the password, and stores it encrypted', async () => {
    const u = await t.user();
    const res = await t.post('/v1/voip-accounts', { token: u.token, body: sip });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'Front door',
      server: 'sip.example.test',
      domain: null,
      port: 5060,
      transport: 'udp',
      username: 'door',
      display_name: null,
      user_id: u.id,
      org_id: null,
      created_at: expect.any(String),
    });
    expect(res.text).not.toContain(sip.password);
    const list = await t.get('/v1/voip-accounts', { token: u.token });
    expect(list.text).not.toContain(sip.password);
    expect(list.body).toEqual([res.body]);

    const stored = await storedPassword(res.body.id);
    expect(stored).not.toContain(sip.password);
    expect(stored).toMatch(/^v1:[\w-]+:[\w-]+:[\w-]+$/);
    const keyFile = voipKeyFile(t.dataDir);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(new SecretBox(keyFile).decrypt(stored)).toBe(sip.password);
    if (onPostgres()) {
      // no column of any stored account holds the plaintext
      const rows = await t.sql('SELECT * FROM voip_accounts');
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        for (const value of Object.values(row)) expect(String(value)).not.toContain(sip.password);
      }
    } else {
      // the raw database file does not hold the plaintext either
      await t.sql('PRAGMA wal_checkpoint(TRUNCATE)');
      expect(fs.readFileSync(path.join(t.dataDir, 'cloud.db')).includes(Buffer.from(sip.password))).toBe(false);
    }
  });

  it('accepts every field and the tcp/tls transports', async () => {
    const u = await t.user();
    const res = await t.post('/v1/voip-accounts', {
      token: u.token,
      body: { ...sip, domain: 'example.test', port: 5061, transport: 'tls', display_name: 'Door' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ domain: 'example.test', port: 5061, transport: 'tls', display_name: 'Door' });
    const second = await t.post('/v1/voip-accounts', { token: u.token, body: { ...sip, transport: 'tcp' } });
    expect(second.body.transport).toBe('tcp');
    // the same password encrypts differently each time (fresh IV)
    expect(await storedPassword(res.body.id)).not.toBe(await storedPassword(second.body.id));
  });

  it('validates with 400 {message} naming the field', async () => {
    const u = await t.user();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...sip, transport: 'sctp' }, /^transport: /],
      [{ ...sip, port: 0 }, /^port: /],
      [{ ...sip, port: 70000 }, /^port: /],
      [{ ...sip, port: 50.5 }, /^port: /],
      [{ ...sip, server: 'bad host!' }, /^server: /],
      [{ ...sip, password: '' }, /^password: /],
      [{ name: 'x', server: 'h', username: 'u' }, /^password: /],
      [{ ...sip, username: ' ' }, /^username: /],
    ];
    for (const [body, message] of cases) {
      const res = await t.post('/v1/voip-accounts', { token: u.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect((await t.get('/v1/voip-accounts', { token: u.token })).body).toEqual([]);
  });

  it('answers 401 without a token and 403 for a foreign organization', async () => {
    const res = await t.post('/v1/voip-accounts', { body: sip });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized' });
    expect((await t.get('/v1/voip-accounts')).status).toBe(401);
    const u = await t.user();
    const other = await t.user();
    const org = await makeOrg(t, other);
    const foreign = await t.post('/v1/voip-accounts', { token: u.token, org, body: sip });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'forbidden' });
    expect((await t.get('/v1/voip-accounts', { token: u.token, org })).status).toBe(403);
  });
});

describe('org scope and DELETE /v1/voip-accounts/{id}', () => {
  it('scopes to the organization: org_id set, members see it, personal lists do not', async () => {
    const admin = await t.user();
    const member = await t.user();
    const org = await makeOrg(t, admin, [member]);
    const acc = (await t.post('/v1/voip-accounts', { token: admin.token, org, body: sip })).body;
    expect(acc.org_id).toBe(org);
    expect((await t.get('/v1/voip-accounts', { token: member.token, org })).body.map((a: any) => a.id)).toEqual([
      acc.id,
    ]);
    expect((await t.get('/v1/voip-accounts', { token: member.token })).body).toEqual([]);
    expect((await t.get('/v1/voip-accounts', { token: admin.token })).body).toEqual([]);
    // a member may not delete the admin's account; out of scope it is not found
    const memberDelete = await t.delete(`/v1/voip-accounts/${acc.id}`, { token: member.token, org });
    expect(memberDelete.status).toBe(403);
    expect(memberDelete.body).toEqual({ error: 'forbidden' });
    expect((await t.delete(`/v1/voip-accounts/${acc.id}`, { token: admin.token })).status).toBe(404);
    const del = await t.delete(`/v1/voip-accounts/${acc.id}`, { token: admin.token, org });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: 'voip account deleted' });
    expect((await t.get('/v1/voip-accounts', { token: member.token, org })).body).toEqual([]);
  });

  it('deletes (200 {message}); unknown → 404 {message}; another tenant → 404; 401; 403', async () => {
    const u = await t.user();
    const other = await t.user();
    const acc = (await t.post('/v1/voip-accounts', { token: u.token, body: sip })).body;
    const foreign = await t.delete(`/v1/voip-accounts/${acc.id}`, { token: other.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ message: 'voip account not found' });
    const otherOrg = await makeOrg(t, other);
    expect((await t.delete(`/v1/voip-accounts/${acc.id}`, { token: u.token, org: otherOrg })).status).toBe(403);
    expect((await t.delete(`/v1/voip-accounts/${acc.id}`)).status).toBe(401);
    expect((await t.delete(`/v1/voip-accounts/${acc.id}`, { token: u.token })).body).toEqual({
      message: 'voip account deleted',
    });
    for (const id of [String(acc.id), '777777', 'abc']) {
      const res = await t.delete(`/v1/voip-accounts/${id}`, { token: u.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
  });
});

describe('SecretBox', () => {
  it('creates one key, reuses it across instances, and rejects tampered ciphertexts', () => {
    const file = path.join(t.dataDir, 'box-test', 'key');
    const a = new SecretBox(file);
    const sealed = a.encrypt('héllo');
    const key = fs.readFileSync(file, 'utf8');
    const b = new SecretBox(file);
    expect(b.decrypt(sealed)).toBe('héllo');
    expect(fs.readFileSync(file, 'utf8')).toBe(key);
    const [v, iv, tag, data] = sealed.split(':');
    const flipped = Buffer.from(data, 'base64url');
    flipped[0] ^= 1;
    expect(() => b.decrypt([v, iv, tag, flipped.toString('base64url')].join(':'))).toThrow();
    expect(() => b.decrypt('plaintext')).toThrow(/format/);
  });
});
