import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DB_FILE } from '../db/database.ts';
import { silentLogger } from '../log.ts';
import { connect, startEdge, tempDir, waitFor } from '../testing/edge.ts';

const tmps: ReturnType<typeof tempDir>[] = [];
afterEach(() => {
  while (tmps.length) tmps.pop()!.cleanup();
});

const sensorConfig = {
  name: 'Outside',
  uniq_id: 'outside-t',
  stat_t: 'outside/t',
  unit_of_meas: '°C',
  json_attr_t: 'outside/attr',
};

describe('state persistence', () => {
  it('restores registry, states and attributes after a restart on the same data dir, and keeps entities working', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    let edge = await startEdge(tmp.dir);
    const creds = await edge.createMqttCredentials({ username: 'd' });
    let c = await connect(edge, creds);
    await c.publishAsync('homeassistant/sensor/outside/config', JSON.stringify(sensorConfig), { qos: 1, retain: true });
    await c.publishAsync(
      'homeassistant/switch/heater/config',
      JSON.stringify({
        name: 'Heater',
        uniq_id: 'heater',
        cmd_t: 'heater/set',
        stat_t: 'heater/state',
        dev: { ids: 'heater-1', name: 'Heater' },
      }),
      { qos: 1, retain: true },
    );
    await waitFor(() => edge.registry.getEntity('switch.heater'));
    await c.publishAsync('outside/t', '4.5', { qos: 1 });
    await c.publishAsync('outside/attr', '{"battery": 80}', { qos: 1 });
    await c.publishAsync('heater/state', 'ON', { qos: 1 });
    await waitFor(() => edge.states.get('switch.heater')?.state === 'on');
    await c.endAsync();
    const before = edge.states.get('sensor.outside');
    expect(before).toMatchObject({ state: '4.5', attributes: { battery: 80, unit_of_measurement: '°C' } });
    const deviceId = edge.registry.getEntity('switch.heater')!.device_registry_id;
    // stop well inside the write-behind delay: stop must flush
    await edge.stop();

    edge = await startEdge(tmp.dir);
    try {
      expect(edge.states.get('sensor.outside')).toEqual(before);
      expect(edge.states.get('switch.heater')?.state).toBe('on');
      expect(edge.registry.getEntity('switch.heater')!.device_registry_id).toBe(deviceId);
      expect(edge.registry.getDevice(deviceId!)?.name).toBe('Heater');
      // the broker lost its retained configs, yet the entities work: state topics and commands
      c = await connect(edge, creds);
      const commands: string[] = [];
      c.on('message', (t, p) => commands.push(`${t} ${p}`));
      await c.subscribeAsync('heater/set', { qos: 1 });
      await edge.callService('switch', 'turn_off', 'switch.heater');
      await waitFor(() => commands.length === 1);
      expect(commands).toEqual(['heater/set OFF']);
      await c.publishAsync('outside/t', '5', { qos: 1 });
      await waitFor(() => edge.states.get('sensor.outside')?.state === '5');
      expect(edge.states.get('sensor.outside')?.attributes.battery).toBe(80);
      await c.endAsync();
    } finally {
      await edge.stop();
    }
  });

  it('batches state writes: a burst becomes one transaction within the delay, not one write per message', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const edge = await startEdge(tmp.dir, { stateFlushMs: 150 });
    try {
      const c = await connect(edge, await edge.createMqttCredentials());
      await c.publishAsync('homeassistant/sensor/outside/config', JSON.stringify(sensorConfig), { qos: 1 });
      await waitFor(() => edge.registry.getEntity('sensor.outside'));
      edge.states.flush();
      const file = path.join(tmp.dir, DB_FILE);
      const reader = new Database(file, { readonly: true });
      const read = () =>
        (
          reader.prepare("SELECT state FROM states WHERE entity_id = 'sensor.outside'").get() as
            { state: string | null } | undefined
        )?.state;
      for (let i = 0; i < 200; i++) c.publish('outside/t', String(i), { qos: 0 });
      await waitFor(() => edge.states.get('sensor.outside')?.state === '199', 3000, 'burst ingested');
      expect(edge.states.pendingWrites).toBe(1); // 200 changes coalesced into one pending row
      expect(read()).not.toBe('199');
      await waitFor(() => read() === '199', 2000, 'write-behind flush');
      expect(edge.states.pendingWrites).toBe(0);
      reader.close();
      await c.endAsync();
    } finally {
      await edge.stop();
    }
  });

  it('logs a write-behind that the database refuses, keeps the rows and writes them once it can', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const warnings: string[] = [];
    const logger = {
      ...silentLogger,
      warn: (msg: string) => {
        warnings.push(msg);
      },
    };
    const edge = await startEdge(tmp.dir, { stateFlushMs: 20, logger });
    try {
      const c = await connect(edge, await edge.createMqttCredentials());
      await c.publishAsync('homeassistant/sensor/outside/config', JSON.stringify(sensorConfig), { qos: 1 });
      await waitFor(() => edge.registry.getEntity('sensor.outside'));
      edge.states.flush();
      edge.database.sqlite.exec(
        "CREATE TRIGGER refuse BEFORE UPDATE ON states BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END;",
      );
      await c.publishAsync('outside/t', '9', { qos: 1 });
      await waitFor(
        () => warnings.some((w) => /states could not be written.*disk full \(test\)/.test(w)),
        3000,
        'a warning',
      );
      expect(edge.states.pendingWrites).toBe(1);
      edge.database.sqlite.exec('DROP TRIGGER refuse');
      await waitFor(() => edge.states.pendingWrites === 0, 5000, 'the retry');
      await c.endAsync();
    } finally {
      await edge.stop();
    }
  });

  it('answers state null with registry attributes for entities that never published', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const edge = await startEdge(tmp.dir);
    try {
      const c = await connect(edge, await edge.createMqttCredentials());
      await c.publishAsync(
        'homeassistant/number/n/config',
        JSON.stringify({ name: 'Level', cmd_t: 'n/set', stat_t: 'n/state', min: 0, max: 10 }),
        { qos: 1 },
      );
      await waitFor(() => edge.registry.getEntity('number.level'));
      expect(edge.states.get('number.level')).toMatchObject({
        state: null,
        attributes: { friendly_name: 'Level', min: 0, max: 10, step: 1 },
      });
      expect(edge.states.all().map((s) => s.entity_id)).toContain('number.level');
      await c.endAsync();
    } finally {
      await edge.stop();
    }
  });
});
