import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudDatabase } from '../db/database.ts';
import { createTestSchema, testDatabaseUrl, type TestSchema } from '../testing/database.ts';
import { authMigrations } from '../auth/tables.ts';
import { orgMigrations, orgRequireMfaMigrations } from '../orgs/tables.ts';
import { shareMigrations } from './shares-table.ts';
import { can, sharesFor, type Action, type Resource } from './can.ts';

let dir: string;
let schema: TestSchema | undefined;
let database: CloudDatabase;
const at = new Date().toISOString();
const ACTIONS: Action[] = ['view', 'control', 'edit', 'manage'];

async function user(id: string) {
  await database.execute(
    'INSERT INTO users (id, email, name, password_hash, app_account_token, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    [id, `${id}@example.test`, id, 'x', `aat-${id}`, at],
  );
}
async function org(id: string, members: Record<string, 'admin' | 'member'>) {
  await database.execute('INSERT INTO organizations (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)', [
    id,
    id,
    at,
    at,
  ]);
  for (const [userId, role] of Object.entries(members)) {
    await database.execute('INSERT INTO org_members (org_id, user_id, role, joined_at) VALUES (?, ?, ?, ?)', [
      id,
      userId,
      role,
      at,
    ]);
  }
}
async function share(
  orgId: string,
  type: string,
  resourceId: string,
  flags: { view?: boolean; control?: boolean; edit?: boolean },
  userId: string | null = null,
) {
  await database.execute(
    `INSERT INTO shares (org_id, resource_type, resource_id, can_view, can_control, can_edit, user_id, created_by, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, 'owner', ?)`,
    [orgId, type, resourceId, flags.view ? 1 : 0, flags.control ? 1 : 0, flags.edit ? 1 : 0, userId, at],
  );
}
async function allowed(userId: string, resource: Resource): Promise<Action[]> {
  const out: Action[] = [];
  for (const action of ACTIONS) if (await can(database.db, userId, action, resource)) out.push(action);
  return out;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'can-test-'));
  const url = testDatabaseUrl();
  schema = url ? await createTestSchema(url) : undefined;
  database = new CloudDatabase(schema?.url ?? path.join(dir, 'cloud.db'), [
    ...authMigrations,
    ...orgMigrations,
    ...shareMigrations,
    ...orgRequireMfaMigrations,
  ]);
  await database.start();
  for (const id of ['owner', 'admin', 'member', 'member2', 'stranger', 'otheradmin']) await user(id);
  // home: where resources live and are shared; other: an organization the share-holders are not in.
  await org('home', { owner: 'admin', admin: 'admin', member: 'member', member2: 'member' });
  await org('other', { otheradmin: 'admin' });
});
afterAll(async () => {
  await database?.stop();
  await schema?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const personal = (type: Resource['type'], id: string): Resource => ({ type, id, ownerId: 'owner', orgId: null });

describe('can(): ownership and organization roles', () => {
  it('lets the owner do everything, personal or in an organization the owner belongs to', async () => {
    expect(await allowed('owner', personal('zone', 'z1'))).toEqual(ACTIONS);
    expect(await allowed('member', { type: 'dashboard', id: 'd1', ownerId: 'member', orgId: 'home' })).toEqual(ACTIONS);
  });
  it("gives the owner of an organization's resource nothing once out of the organization (it stays the organization's)", async () => {
    for (const type of ['dashboard', 'zone', 'edge', 'voip_account'] as const) {
      expect(await allowed('owner', { type, id: 'left-behind', ownerId: 'owner', orgId: 'other' }), type).toEqual([]);
    }
    expect(await allowed('otheradmin', { type: 'zone', id: 'left-behind', ownerId: 'owner', orgId: 'other' })).toEqual(
      ACTIONS,
    );
  });
  it('gives nobody else anything on a personal, unshared resource', async () => {
    for (const u of ['admin', 'member', 'stranger']) expect(await allowed(u, personal('zone', 'z1')), u).toEqual([]);
  });
  it("lets an admin of the resource's organization do everything", async () => {
    expect(await allowed('admin', { type: 'zone', id: 'z2', ownerId: 'owner', orgId: 'home' })).toEqual(ACTIONS);
    expect(await allowed('otheradmin', { type: 'zone', id: 'z2', ownerId: 'owner', orgId: 'home' })).toEqual([]);
  });
  it("lets a member of the resource's organization view and control, but not edit or manage", async () => {
    expect(await allowed('member', { type: 'edge', id: 'e1', ownerId: 'owner', orgId: 'home' })).toEqual([
      'view',
      'control',
    ]);
    expect(await allowed('member', { type: 'device', id: 'dev1', ownerId: 'owner', orgId: 'home' })).toEqual([
      'view',
      'control',
    ]);
  });
  it('gives a non-member nothing on an organization resource', async () => {
    expect(await allowed('stranger', { type: 'zone', id: 'z3', ownerId: 'owner', orgId: 'home' })).toEqual([]);
  });
  it('counts a member without MFA as none while the organization requires it, its shares included', async () => {
    await user('nomfa');
    await user('withmfa');
    await database.execute("UPDATE users SET totp_secret = 'JBSWY3DPEHPK3PXP' WHERE id = 'withmfa'");
    await org('strict', { nomfa: 'admin', withmfa: 'member' });
    await share('strict', 'dashboard', 'strict-board', { view: true });
    const zone: Resource = { type: 'zone', id: 'z4', ownerId: 'nomfa', orgId: 'strict' };
    const board: Resource = { type: 'dashboard', id: 'strict-board', ownerId: 'x', orgId: null };
    await database.execute("UPDATE organizations SET require_mfa = 1 WHERE id = 'strict'");
    expect([await allowed('nomfa', zone), await allowed('nomfa', board)]).toEqual([[], []]);
    expect([await allowed('withmfa', zone), await allowed('withmfa', board)]).toEqual([['view', 'control'], ['view']]);
    await database.execute("UPDATE organizations SET require_mfa = 0 WHERE id = 'strict'");
    expect([await allowed('nomfa', zone), await allowed('nomfa', board)]).toEqual([ACTIONS, ['view']]);
  });
});

describe('can(): shares', () => {
  it('can_view grants view only', async () => {
    await share('home', 'entity', 'light.view', { view: true });
    expect(await allowed('member', personal('entity', 'light.view'))).toEqual(['view']);
  });
  it('can_control grants view and control', async () => {
    await share('home', 'entity', 'light.control', { control: true });
    expect(await allowed('member', personal('entity', 'light.control'))).toEqual(['view', 'control']);
  });
  it('can_edit grants view and edit, never manage', async () => {
    await share('home', 'dashboard', 'dash.edit', { edit: true });
    expect(await allowed('member', personal('dashboard', 'dash.edit'))).toEqual(['view', 'edit']);
  });
  it('a share applies to admins of the organization too, but still never grants manage', async () => {
    await share('home', 'device', 'dev.all', { view: true, control: true, edit: true });
    expect(await allowed('admin', personal('device', 'dev.all'))).toEqual(['view', 'control', 'edit']);
  });
  it('combines the flags of several shares of one resource', async () => {
    await share('home', 'lock_schedule', 'sched1', { view: true });
    await share('home', 'lock_schedule', 'sched1', { control: true }, 'member');
    expect(await allowed('member', personal('lock_schedule', 'sched1'))).toEqual(['view', 'control']);
    expect(await allowed('member2', personal('lock_schedule', 'sched1'))).toEqual(['view']);
  });
  it('a user-scoped share reaches only that member', async () => {
    await share('home', 'lock_credential', 'cred1', { view: true, control: true }, 'member2');
    expect(await allowed('member2', personal('lock_credential', 'cred1'))).toEqual(['view', 'control']);
    expect(await allowed('member', personal('lock_credential', 'cred1'))).toEqual([]);
    expect(await allowed('admin', personal('lock_credential', 'cred1'))).toEqual([]);
  });
  it('a share into an organization the user is not in gives nothing', async () => {
    await share('other', 'entity', 'light.elsewhere', { view: true, control: true, edit: true });
    await share('other', 'entity', 'light.named', { view: true, control: true, edit: true }, 'member');
    for (const u of ['member', 'admin', 'stranger']) {
      expect(await allowed(u, personal('entity', 'light.elsewhere')), u).toEqual([]);
      expect(await allowed(u, personal('entity', 'light.named')), u).toEqual([]);
    }
    expect(await allowed('otheradmin', personal('entity', 'light.elsewhere'))).toEqual(['view', 'control', 'edit']);
  });
  it('a share matches only its resource type and id', async () => {
    await share('home', 'entity', 'same-id', { view: true });
    expect(await allowed('member', personal('device', 'same-id'))).toEqual([]);
    expect(await allowed('member', personal('entity', 'same-id-2'))).toEqual([]);
  });
  it('non-shareable resource types are never granted through shares', async () => {
    await share('home', 'zone', 'z-shared', { view: true, control: true, edit: true });
    expect(await allowed('member', personal('zone', 'z-shared'))).toEqual([]);
  });
  it('a share stops working when the member leaves the organization', async () => {
    await share('home', 'entity', 'light.leaver', { view: true });
    expect(await allowed('member2', personal('entity', 'light.leaver'))).toEqual(['view']);
    await database.execute("DELETE FROM org_members WHERE org_id = 'home' AND user_id = 'member2'");
    expect(await allowed('member2', personal('entity', 'light.leaver'))).toEqual([]);
    await database.execute(
      "INSERT INTO org_members (org_id, user_id, role, joined_at) VALUES ('home', 'member2', 'member', ?)",
      [at],
    );
  });
});

describe('sharesFor()', () => {
  it('returns the combined flags per resource, for every or for the given ids', async () => {
    await share('home', 'lock_visitor', 'v1', { view: true });
    await share('home', 'lock_visitor', 'v1', { edit: true }, 'member');
    await share('home', 'lock_visitor', 'v2', { control: true }, 'member2');
    await share('other', 'lock_visitor', 'v3', { view: true });
    const all = await sharesFor(database.db, 'member', 'lock_visitor');
    expect(Object.fromEntries(all)).toEqual({ v1: { canView: true, canControl: false, canEdit: true } });
    const some = await sharesFor(database.db, 'member2', 'lock_visitor', ['v1', 'v2', 'v3']);
    expect(Object.fromEntries(some)).toEqual({
      v1: { canView: true, canControl: false, canEdit: false },
      v2: { canView: false, canControl: true, canEdit: false },
    });
    expect((await sharesFor(database.db, 'stranger', 'lock_visitor')).size).toBe(0);
  });
});
