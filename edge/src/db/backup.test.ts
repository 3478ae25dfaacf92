import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, startEdge, tempDir, waitFor } from '../testing/edge.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
/** The real Node 24 binary (node_modules/.bin/node is a shell shim). */
const NODE = path.join(ROOT, 'node_modules/node/bin/node');
const cli = (...args: string[]) =>
  execFileSync(NODE, [path.join(ROOT, 'edge/src/main.ts'), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('backup and restore of the edge database', () => {
  it('takes an online backup of a running edge and restores it into a new data dir', async () => {
    const a = tempDir();
    cleanups.push(a.cleanup);
    const edge = await startEdge(a.dir);
    cleanups.push(() => edge.stop());
    const creds = await edge.createMqttCredentials({ role: 'device' });
    const device = await connect(edge, creds);
    cleanups.push(() => device.endAsync());
    await device.publishAsync(
      'homeassistant/sensor/t1/config',
      JSON.stringify({
        name: 'Temp',
        uniq_id: 't1',
        stat_t: 't1/state',
        unit_of_meas: '°C',
        dev: { ids: 'th-1', name: 'Hall' },
      }),
      { qos: 1, retain: true },
    );
    await device.publishAsync('t1/state', '21.5', { qos: 1 });
    const entityId = await waitFor(() => edge.states.all().find((s) => s.state === '21.5')?.entity_id, 5000, 'state');
    edge.states.flush();

    // Online: the edge keeps running while the copy is taken.
    const out = path.join(a.dir, 'backups', 'edge-1.db');
    expect(cli('backup', '--data-dir', a.dir, '--out', out).trim()).toBe(out);
    expect(fs.statSync(out).size).toBeGreaterThan(0);
    expect(() => cli('backup', '--data-dir', a.dir, '--out', out)).toThrow(/already exists/);
    await device.publishAsync('t1/state', '22.0', { qos: 1 });
    await waitFor(() => edge.states.get(entityId)?.state === '22.0', 5000, 'later state');

    const b = tempDir();
    cleanups.push(b.cleanup);
    cli('restore', '--data-dir', b.dir, '--from', out);
    const restored = await startEdge(b.dir);
    cleanups.push(() => restored.stop());
    // The copy holds what was there at backup time, including the device registry and MQTT users.
    expect(restored.states.get(entityId)).toMatchObject({
      entity_id: entityId,
      state: '21.5',
      attributes: expect.objectContaining({ unit_of_measurement: '°C' }),
    });
    expect(restored.registry.listDevices().map((d) => d.name)).toEqual(['Hall']);
    expect(restored.listMqttUsers().map((u) => u.username)).toContain(creds.username);
  });

  it('explains a missing database or a missing --out in one line', () => {
    const d = tempDir();
    cleanups.push(d.cleanup);
    expect(() => cli('backup', '--data-dir', d.dir, '--out', path.join(d.dir, 'x.db'))).toThrow(/no edge database/);
    expect(() => cli('backup', '--data-dir', d.dir)).toThrow(/backup needs --out FILE/);
  });
});
