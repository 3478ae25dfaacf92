import { randomUUID } from 'node:crypto';
import type { tunnel } from '@smarthome/protocol';
import type { TestCloud } from '../testing/harness.ts';

/** Test helpers: organizations and memberships written straight to the database. */
export async function makeOrg(t: TestCloud, adminId: string, name = 'Org'): Promise<string> {
  const id = randomUUID();
  const at = new Date().toISOString();
  await t.cloud.database.execute('INSERT INTO organizations (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)', [
    id,
    name,
    at,
    at,
  ]);
  await addMember(t, id, adminId, 'admin');
  return id;
}

export async function addMember(t: TestCloud, orgId: string, userId: string, role: 'admin' | 'member'): Promise<void> {
  await t.cloud.database.execute('INSERT INTO org_members (org_id, user_id, role, joined_at) VALUES (?, ?, ?, ?)', [
    orgId,
    userId,
    role,
    new Date().toISOString(),
  ]);
}

export async function subscribe(t: TestCloud, userId: string, planId: number, status = 'active'): Promise<string> {
  const id = randomUUID();
  const at = new Date().toISOString();
  await t.cloud.database.execute(
    `INSERT INTO subscriptions (id, user_id, plan_id, status, gateway_provider, auto_renew, created_at, updated_at)
    VALUES (?, ?, ?, ?, 'app_store', 1, ?, ?)`,
    [id, userId, planId, status, at, at],
  );
  return id;
}

/** A snapshot with n devices (one entity each), the given config entries and automations. */
export function sampleSnapshot(n: { devices?: number; entries?: number; automations?: number } = {}): tunnel.Snapshot {
  const devices = Array.from({ length: n.devices ?? 0 }, (_, i) => ({
    id: i + 1,
    name: `Lamp ${i + 1}`,
    manufacturer: 'Acme',
    model: 'L1',
    config_entry_id: 1,
    user_id: null,
  }));
  const entities = devices.map((d) => ({
    id: d.id,
    entity_id: `light.lamp_${d.id}`,
    name: d.name,
    domain: 'light',
    platform: 'demo',
    unique_id: `u${d.id}`,
    config_entry_id: 1,
    device_registry_id: d.id,
  }));
  return {
    devices,
    entities,
    states: entities.map((e) => ({
      entity_id: e.entity_id,
      name: e.name,
      domain: 'light',
      platform: 'demo',
      state: 'off',
      attributes: { brightness: 0 },
    })),
    config_entries: Array.from({ length: n.entries ?? 0 }, (_, i) => ({
      id: i + 1,
      domain: 'demo',
      title: `Demo ${i + 1}`,
      source: 'user',
      state: 'loaded',
      created_at: new Date().toISOString(),
    })),
    automations: Array.from({ length: n.automations ?? 0 }, (_, i) => ({
      id: `a${i + 1}`,
      edge_id: null,
      alias: `Auto ${i + 1}`,
      enabled: true,
      mode: 'single' as const,
      webhook_id: null,
    })),
  };
}
