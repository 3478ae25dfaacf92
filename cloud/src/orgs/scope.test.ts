import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandling } from '@smarthome/protocol/server';
import { CloudDatabase } from '../db/database.ts';
import { createTestSchema, testDatabaseUrl, type TestSchema } from '../testing/database.ts';
import { authMigrations } from '../auth/tables.ts';
import { orgMigrations, orgRequireMfaMigrations } from './tables.ts';
import { requireOrgRole, resolveScope } from './scope.ts';

/** The org-context rule (X-Organization-Id) every org-context endpoint builds on. */
let dir: string;
let schema: TestSchema | undefined;
let database: CloudDatabase;
const app = new Hono();

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scope-test-'));
  const url = testDatabaseUrl();
  schema = url ? await createTestSchema(url) : undefined;
  database = new CloudDatabase(schema?.url ?? path.join(dir, 'cloud.db'), [
    ...authMigrations,
    ...orgMigrations,
    ...orgRequireMfaMigrations,
  ]);
  await database.start();
  const at = new Date().toISOString();
  for (const id of ['alice', 'bob', 'carol']) {
    await database.execute(
      'INSERT INTO users (id, email, password_hash, app_account_token, created_at) VALUES (?, ?, ?, ?, ?)',
      [id, `${id}@example.test`, 'x', `aat-${id}`, at],
    );
  }
  await database.execute("INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org1', 'One', ?, ?)", [
    at,
    at,
  ]);
  for (const [user, role] of [
    ['alice', 'admin'],
    ['bob', 'member'],
  ]) {
    await database.execute('INSERT INTO org_members (org_id, user_id, role, joined_at) VALUES (?, ?, ?, ?)', [
      'org1',
      user,
      role,
      at,
    ]);
  }
  installErrorHandling(app, { error: () => {} });
  app.get('/scope/:user', async (c) => c.json(await resolveScope(database.db, c, c.req.param('user'))));
  app.get('/role/:org/:user/:need', async (c) =>
    c.json({
      role: await requireOrgRole(
        database.db,
        c.req.param('org'),
        c.req.param('user'),
        c.req.param('need') as 'member' | 'admin',
      ),
    }),
  );
});
afterAll(async () => {
  await database?.stop();
  await schema?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('resolveScope (X-Organization-Id)', () => {
  it('uses the personal scope (org_id null) without the header or with an empty one', async () => {
    expect(await (await app.request('/scope/carol')).json()).toEqual({
      kind: 'personal',
      userId: 'carol',
      orgId: null,
    });
    const blank = await app.request('/scope/carol', { headers: { 'X-Organization-Id': '  ' } });
    expect(await blank.json()).toEqual({ kind: 'personal', userId: 'carol', orgId: null });
  });
  it('scopes a member to the organization with their role', async () => {
    const res = await app.request('/scope/bob', { headers: { 'x-organization-id': 'org1' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ kind: 'org', userId: 'bob', orgId: 'org1', role: 'member' });
    const admin = await app.request('/scope/alice', { headers: { 'X-Organization-Id': 'org1' } });
    expect(await admin.json()).toMatchObject({ role: 'admin' });
  });
  it('answers 403 {error} to a non-member and for an unknown organization (no probing)', async () => {
    const res = await app.request('/scope/carol', { headers: { 'X-Organization-Id': 'org1' } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'forbidden' });
    expect((await app.request('/scope/alice', { headers: { 'X-Organization-Id': 'nope' } })).status).toBe(403);
  });
});

describe('requireOrgRole', () => {
  it('returns the role, 403 for a non-member or non-admin, 404 for an unknown organization', async () => {
    expect(await (await app.request('/role/org1/bob/member')).json()).toEqual({ role: 'member' });
    expect(await (await app.request('/role/org1/alice/admin')).json()).toEqual({ role: 'admin' });
    expect((await app.request('/role/org1/bob/admin')).status).toBe(403);
    expect((await app.request('/role/org1/carol/member')).status).toBe(403);
    const unknown = await app.request('/role/nope/alice/member');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ message: 'organization not found' });
  });
});
