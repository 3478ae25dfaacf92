import { randomBytes, scryptSync } from 'node:crypto';
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { EdgeDatabase } from '../db/database.ts';
import { silentLogger } from '../log.ts';
import { tempDir } from '../testing/edge.ts';
import { MqttAcl } from './acl.ts';
import { MqttBroker } from './broker.ts';
import { MqttUserStore } from './users.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function openStore(): { database: EdgeDatabase; users: MqttUserStore } {
  const tmp = tempDir();
  cleanups.push(tmp.cleanup);
  const database = new EdgeDatabase(tmp.dir);
  database.open();
  cleanups.push(() => database.close());
  return { database, users: new MqttUserStore(database) };
}

const storedHash = (database: EdgeDatabase, username: string) =>
  database.sqlite.prepare('SELECT password_hash FROM mqtt_users WHERE username = ?').pluck().get(username) as string;

/** A row as an earlier version wrote it: scrypt N=16384, r=8, p=1. */
function insertScryptUser(database: EdgeDatabase, username: string, password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  const hash = `scrypt$16384$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
  database.sqlite
    .prepare("INSERT INTO mqtt_users (username, password_hash, role, created_at) VALUES (?, ?, 'device', ?)")
    .run(username, hash, new Date().toISOString());
  return hash;
}

describe('MQTT users: generated passwords stored as SHA-256', () => {
  it('stores a created user as SHA-256 and checks the password', async () => {
    const { database, users } = openStore();
    const creds = await users.create({ username: 'plug', role: 'device' });
    expect(storedHash(database, 'plug')).toMatch(/^sha256\$[A-Za-z0-9+/]{43}=$/);
    expect(await users.authenticate('plug', Buffer.from(creds.password))).toEqual({ username: 'plug', role: 'device' });
    expect(await users.authenticate('plug', Buffer.from(creds.password + 'x'))).toBeNull();
    expect(await users.authenticate('nobody', Buffer.from(creds.password))).toBeNull();
    expect(await users.authenticate('plug', undefined)).toBeNull();
  });

  it('stores the cloud-issued password of put() as SHA-256, replacing the previous one', async () => {
    const { database, users } = openStore();
    await users.put({ username: 'edge-7', password: 'first', role: 'integration' });
    await users.put({ username: 'edge-7', password: 'second', role: 'integration' });
    expect(storedHash(database, 'edge-7')).toMatch(/^sha256\$/);
    expect(await users.authenticate('edge-7', Buffer.from('first'))).toBeNull();
    expect(await users.authenticate('edge-7', Buffer.from('second'))).toEqual({
      username: 'edge-7',
      role: 'integration',
    });
  });

  it("accepts an earlier version's scrypt hash and replaces it with SHA-256 on the first success only", async () => {
    const { database, users } = openStore();
    const legacy = insertScryptUser(database, 'old-sensor', 'legacy-secret');
    expect(await users.authenticate('old-sensor', Buffer.from('wrong'))).toBeNull();
    expect(storedHash(database, 'old-sensor')).toBe(legacy);
    expect(await users.authenticate('old-sensor', Buffer.from('legacy-secret'))).toEqual({
      username: 'old-sensor',
      role: 'device',
    });
    expect(storedHash(database, 'old-sensor')).toMatch(/^sha256\$/);
    expect(await users.authenticate('old-sensor', Buffer.from('legacy-secret'))).not.toBeNull();
    expect(await users.authenticate('old-sensor', Buffer.from('wrong'))).toBeNull();
  });

  it('lets an mqtt.js client in with a legacy and with a new password, and refuses a wrong one', async () => {
    const { database, users } = openStore();
    insertScryptUser(database, 'old-sensor', 'legacy-secret');
    const creds = await users.create({ role: 'device' });
    const broker = new MqttBroker({
      port: 0,
      host: '127.0.0.1',
      users,
      acl: new MqttAcl('homeassistant'),
      log: silentLogger,
    });
    const port = await broker.start();
    cleanups.push(() => broker.stop());
    const url = `mqtt://127.0.0.1:${port}`;
    const connects = async (username: string, password: string) => {
      const client = mqtt.connect(url, { username, password, reconnectPeriod: 0 });
      client.on('error', () => {});
      const ok = await new Promise<boolean>((resolve) => {
        client.once('connect', () => resolve(true));
        client.once('close', () => resolve(false));
      });
      await client.endAsync(true);
      return ok;
    };
    expect(await connects('old-sensor', 'legacy-secret')).toBe(true);
    expect(await connects('old-sensor', 'legacy-secret')).toBe(true);
    expect(storedHash(database, 'old-sensor')).toMatch(/^sha256\$/);
    expect(await connects(creds.username, creds.password)).toBe(true);
    expect(await connects(creds.username, 'not-it')).toBe(false);
  });
});
