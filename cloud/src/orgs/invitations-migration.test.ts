import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CloudDatabase } from '../db/database.ts';
import { migrations } from '../modules.ts';
import { createTestSchema, testDatabaseUrl, type TestSchema } from '../testing/database.ts';
import { invitationDeclinedMigrations } from './invitations-table.ts';

let dir: string;
let schema: TestSchema | undefined;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inv-migration-'));
  const url = testDatabaseUrl();
  schema = url ? await createTestSchema(url) : undefined;
});
afterAll(async () => {
  await schema?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

it("an upgrade keeps the invitations written before 'declined' existed, and then stores declined ones", async () => {
  const location = schema?.url ?? path.join(dir, 'cloud.db');
  const newIds = new Set(invitationDeclinedMigrations.map((m) => m.id));
  const before = new CloudDatabase(
    location,
    migrations.filter((m) => !newIds.has(m.id)),
  );
  await before.start();
  const at = new Date().toISOString();
  await before.execute('INSERT INTO organizations (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)', [
    'o1',
    'Old org',
    at,
    at,
  ]);
  const row = ['i1', 'o1', 'old@example.test', 'member', 'accepted', 'hash-1', 'u1', at, 'u2', at, at];
  await before.execute(
    'INSERT INTO org_invitations (id, org_id, email, role, status, token_hash, invited_by, expires_at, accepted_by, accepted_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    row,
  );
  await expect(before.execute("UPDATE org_invitations SET status = 'declined' WHERE id = 'i1'")).rejects.toThrow();
  await before.stop();

  const after = new CloudDatabase(location, migrations);
  await after.start();
  try {
    expect(await after.query('SELECT * FROM org_invitations')).toEqual([
      {
        id: 'i1',
        org_id: 'o1',
        email: 'old@example.test',
        role: 'member',
        status: 'accepted',
        token_hash: 'hash-1',
        invited_by: 'u1',
        expires_at: at,
        accepted_by: 'u2',
        accepted_at: at,
        created_at: at,
      },
    ]);
    expect(await after.execute("UPDATE org_invitations SET status = 'declined' WHERE id = 'i1'")).toBe(1);
    await expect(after.execute("UPDATE org_invitations SET status = 'gone' WHERE id = 'i1'")).rejects.toThrow();
    // the token hash stays unique, the organization's invitations still go with it
    await expect(
      after.execute(
        'INSERT INTO org_invitations (id, org_id, email, role, status, token_hash, invited_by, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        ['i2', 'o1', 'x@example.test', 'member', 'pending', 'hash-1', 'u1', at, at],
      ),
    ).rejects.toThrow();
    await after.execute("DELETE FROM organizations WHERE id = 'o1'");
    expect(await after.query('SELECT id FROM org_invitations')).toEqual([]);
  } finally {
    await after.stop();
  }
});
