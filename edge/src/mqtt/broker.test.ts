import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { writeToStream } from 'mqtt-packet';
import { describe, expect, it } from 'vitest';
import type { MqttCredentials } from '@smarthome/protocol';
import type { Edge } from '../edge.ts';
import { MOSQUITTO, collector, connect, granted, recordingLogger, waitFor } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

let edge: Edge;
let dev1: MqttCredentials;
let dev2: MqttCredentials;
let integration: MqttCredentials;
const logs = recordingLogger();

useEdge({ logger: logs }, async (started) => {
  edge = started;
  dev1 = await edge.createMqttCredentials({ username: 'dev1' });
  dev2 = await edge.createMqttCredentials({ username: 'dev2' });
  integration = await edge.createMqttCredentials({ username: 'z2m', role: 'integration' });
  const c = await connect(edge, dev1);
  await c.publishAsync(
    'homeassistant/switch/plug1/config',
    JSON.stringify({
      name: 'Plug one',
      uniq_id: 'plug1',
      cmd_t: 'cmnd/plug1/POWER',
      stat_t: 'stat/plug1/POWER',
      avty_t: 'tele/plug1/LWT',
      pl_avail: 'Online',
      pl_not_avail: 'Offline',
    }),
    { qos: 1, retain: true },
  );
  await c.endAsync();
  await waitFor(() => edge.registry.getEntity('switch.plug_one'), 3000, 'plug entity');
});

/** Runs a mosquitto client without blocking this process's event loop (the broker lives here). */
function run(
  cmd: string,
  args: string[],
  timeoutMs = 5000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
const mosq = (creds: MqttCredentials | null) => [
  '-h',
  '127.0.0.1',
  '-p',
  String(edge.ports.mqtt),
  ...(creds ? ['-u', creds.username, '-P', creds.password] : []),
];

describe('broker authentication', () => {
  it('refuses clients without credentials or with a wrong password', async () => {
    await expect(connect(edge, null)).rejects.toThrow(/bad user ?name or password|not authori[sz]ed/i);
    await expect(connect(edge, { username: 'dev1', password: 'wrong' })).rejects.toThrow(/bad user ?name or password/i);
    await expect(connect(edge, { username: 'nobody', password: 'x' })).rejects.toThrow(/bad user ?name or password/i);
    const ok = await connect(edge, dev1);
    expect(ok.connected).toBe(true);
    await ok.endAsync();
  });

  it.skipIf(!MOSQUITTO)('refuses mosquitto_pub without credentials', async () => {
    const r = await run('mosquitto_pub', [...mosq(null), '-t', 'stat/plug1/POWER', '-m', 'ON']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/not authorised|bad user name|refused/i);
  });

  it('disconnects the clients of a deleted user and refuses it afterwards', async () => {
    const creds = await edge.createMqttCredentials();
    expect(creds.username).toMatch(/^device-[0-9a-f]{10}$/);
    const c = await connect(edge, creds);
    const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
    expect(edge.deleteMqttUser(creds.username)).toBe(true);
    await closed;
    await expect(connect(edge, creds)).rejects.toThrow(/bad user ?name or password/i);
  });
});

describe('a second, independent client (mosquitto)', () => {
  it.skipIf(!MOSQUITTO)('mosquitto_pub state reaches the entity; a service call reaches mosquitto_sub', async () => {
    const r = await run('mosquitto_pub', [...mosq(dev1), '-q', '1', '-t', 'stat/plug1/POWER', '-m', 'ON']);
    expect(r.code).toBe(0);
    await waitFor(() => edge.states.get('switch.plug_one')?.state === 'on', 3000, 'state from mosquitto_pub');

    let exited = false;
    const sub = run('mosquitto_sub', [
      ...mosq(dev1),
      '-q',
      '1',
      '-t',
      'cmnd/plug1/POWER',
      '-C',
      '1',
      '-v',
      '-W',
      '5',
    ]).finally(() => {
      exited = true;
    });
    // mosquitto_sub subscribes at its own pace (slow on a loaded machine) and exits after one
    // message: repeat the command until it has printed one
    while (!exited) {
      await edge.callService('switch', 'turn_off', 'switch.plug_one');
      await new Promise((r2) => setTimeout(r2, 200));
    }
    const out = await sub;
    expect(out.stdout.trim()).toBe('cmnd/plug1/POWER OFF');
  });
});

describe('authorization', () => {
  it('refuses a device subscription to # but lets an integration user listen to everything', async () => {
    const d = await connect(edge, dev2);
    expect(await granted(d, '#')).toBe(128);
    expect(await granted(d, '+/plug1/POWER')).toBe(128);
    expect(await granted(d, '$SYS/#')).toBe(128);
    expect(await granted(d, 'stat/plug2/POWER')).toBe(1);
    expect(d.connected).toBe(true);
    await d.endAsync();
    const z = await connect(edge, integration);
    expect(await granted(z, '#')).toBe(1);
    await z.endAsync();
  });

  it("refuses (SUBACK 0x80, one warn line) a device subscribing to another user's command topic", async () => {
    const spy = await connect(edge, dev2);
    const before = logs.warnings().length;
    expect(await granted(spy, 'cmnd/plug1/POWER')).toBe(128);
    expect(spy.connected).toBe(true);
    expect(logs.warnings().slice(before)).toEqual([
      'mqtt: refused subscription to cmnd/plug1/POWER by dev2: command topic owned by dev1',
    ]);
    await spy.endAsync();
    // the owner and integration users may
    const owner = await connect(edge, dev1);
    expect(await granted(owner, 'cmnd/plug1/POWER')).toBe(1);
    await owner.endAsync();
    const z = await connect(edge, integration);
    expect(await granted(z, 'cmnd/plug1/POWER')).toBe(1);
    await z.endAsync();
  });

  it("drops a device's publish to another user's command topic: acknowledged, not delivered, logged, connection kept", async () => {
    const owner = await connect(edge, dev1);
    const inbox = await collector(owner, 'cmnd/plug1/POWER');
    const intruder = await connect(edge, dev2);
    const before = logs.warnings().length;
    await intruder.publishAsync('cmnd/plug1/POWER', 'ON', { qos: 1 });
    await intruder.publishAsync('cmnd/plug1/POWER', 'ON', { qos: 2 });
    await intruder.publishAsync('cmnd/plug1/POWER', 'ON', { qos: 0 });
    await waitFor(() => logs.warnings().length >= before + 3, 3000, 'the QoS 0 refusal');
    expect(logs.warnings().slice(before)).toEqual(
      Array(3).fill('mqtt: refused publish to cmnd/plug1/POWER by dev2: command topic owned by dev1'),
    );
    // still connected and still allowed its own topics
    expect(intruder.connected).toBe(true);
    await intruder.publishAsync('stat/dev2thing/POWER', 'ON', { qos: 1 });
    // nor through a last will
    const willer = await connect(edge, dev2, {
      will: { topic: 'cmnd/plug1/POWER', payload: Buffer.from('OFF'), qos: 1, retain: false },
    });
    willer.stream.destroy();
    await waitFor(() => logs.warnings().length >= before + 4, 3000, 'the will refusal');
    willer.end(true);
    await new Promise((r) => setTimeout(r, 100));
    expect(inbox.messages).toEqual([]);
    // the owner and integration users may
    const z = await connect(edge, integration);
    await z.publishAsync('cmnd/plug1/POWER', 'ON', { qos: 1 });
    expect((await inbox.next(1))[0]).toEqual({ topic: 'cmnd/plug1/POWER', payload: 'ON' });
    await z.endAsync();
    await intruder.endAsync();
    await owner.endAsync();
  });

  it("does not deliver another user's commands through a wildcard subscription", async () => {
    const spy = await connect(edge, dev2);
    const seen = await collector(spy, 'cmnd/#');
    const own = await connect(edge, dev2);
    await own.publishAsync('cmnd/dev2thing/POWER', 'X', { qos: 1 });
    await seen.next(1);
    await edge.callService('switch', 'turn_on', 'switch.plug_one');
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.messages.map((m) => m.topic)).toEqual(['cmnd/dev2thing/POWER']);
    await spy.endAsync();
    await own.endAsync();
  });

  it("refuses a device hijacking another user's discovery config or command topics, without taking it over", async () => {
    const configBefore = (await edge.broker.retained('homeassistant/switch/plug1/config'))?.payload.toString();
    expect(configBefore).toContain('Plug one');
    const intruder = await connect(edge, dev2);
    const before = logs.warnings().length;
    await intruder.publishAsync('homeassistant/switch/plug1/config', '', { qos: 1, retain: true });
    await intruder.publishAsync(
      'homeassistant/switch/evil/config',
      JSON.stringify({ name: 'Evil', cmd_t: 'cmnd/plug1/POWER' }),
      { qos: 1 },
    );
    // and the birth topic is the edge's
    await intruder.publishAsync('homeassistant/status', 'offline', { qos: 1, retain: true });
    expect(logs.warnings().slice(before)).toEqual([
      'mqtt: refused publish to homeassistant/switch/plug1/config by dev2: discovery config owned by dev1',
      'mqtt: refused publish to homeassistant/switch/evil/config by dev2: the config declares cmnd/plug1/POWER, a command topic owned by dev1',
      "mqtt: refused publish to homeassistant/status by dev2: the birth topic is the edge's",
    ]);
    expect(intruder.connected).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(edge.registry.getEntity('switch.plug_one')).toBeDefined();
    expect(edge.registry.getEntity('switch.evil')).toBeUndefined();
    // nothing retained from a refused publish
    expect((await edge.broker.retained('homeassistant/switch/plug1/config'))?.payload.toString()).toBe(configBefore);
    expect((await edge.broker.retained('homeassistant/status'))?.payload.toString()).toBe('online');
    await intruder.endAsync();
  });

  it('refuses new credentials re-publishing an owned config visibly, keeps them connected, and keeps the owner', async () => {
    const replacement = await edge.createMqttCredentials({ username: 'plug1-new' });
    const c = await connect(edge, replacement);
    const before = logs.warnings().length;
    await c.publishAsync(
      'homeassistant/switch/plug1/config',
      JSON.stringify({ name: 'Plug one', uniq_id: 'plug1', cmd_t: 'cmnd/plug1/POWER', stat_t: 'stat/plug1/POWER' }),
      { qos: 1, retain: true },
    );
    expect(logs.warnings().slice(before)).toEqual([
      'mqtt: refused publish to homeassistant/switch/plug1/config by plug1-new: discovery config owned by dev1',
    ]);
    expect(c.connected).toBe(true);
    expect(edge.registry.getEntity('switch.plug_one')?.config.owner).toBe('dev1');
    expect(await granted(c, 'cmnd/plug1/POWER')).toBe(128);
    // its state still reaches the entity (state topics are not owned)
    await c.publishAsync('stat/plug1/POWER', 'ON', { qos: 1 });
    await waitFor(() => edge.states.get('switch.plug_one')?.state === 'on', 3000, 'state from the new credentials');
    await c.endAsync();
  });
});

describe('broker features', () => {
  it('delivers retained QoS 1 messages to later subscribers and the birth message', async () => {
    const a = await connect(edge, dev1);
    await a.publishAsync('stat/plug1/RESULT', 'hello', { qos: 1, retain: true });
    await a.endAsync();
    const b = await connect(edge, dev1);
    const got = new Promise<{ topic: string; payload: string; retain: boolean; qos: number }>((resolve) =>
      b.on('message', (topic, payload, packet) => {
        if (topic === 'stat/plug1/RESULT')
          resolve({ topic, payload: payload.toString(), retain: packet.retain, qos: packet.qos });
      }),
    );
    const birth = new Promise<string>((resolve) =>
      b.on('message', (t, p) => {
        if (t === 'homeassistant/status') resolve(p.toString());
      }),
    );
    await b.subscribeAsync(['stat/plug1/RESULT', 'homeassistant/status'], { qos: 1 });
    expect(await got).toEqual({ topic: 'stat/plug1/RESULT', payload: 'hello', retain: true, qos: 1 });
    expect(await birth).toBe('online');
    await b.endAsync();
  });

  it("writes packets without mqtt-packet's table of 65,536 number Buffers (6.6 MB of heap)", async () => {
    // QoS 1 both ways: the broker writes PUBACKs and deliveries with packet ids
    const a = await connect(edge, dev1);
    await a.subscribeAsync('stat/plug1/NUMBERS', { qos: 1 });
    const got = new Promise<string>((resolve) => a.on('message', (_t, p) => resolve(p.toString())));
    await a.publishAsync('stat/plug1/NUMBERS', 'n', { qos: 1 });
    expect(await got).toBe('n');
    await a.endAsync();
    const numbers = createRequire(import.meta.url)('mqtt-packet/numbers.js') as { cache: Record<number, Buffer> };
    expect(writeToStream.cacheNumbers).toBe(false);
    expect(Object.keys(numbers.cache)).toHaveLength(0);
  });

  it('publishes a last will when a device drops, which makes its entity unavailable', async () => {
    const c = await connect(edge, dev1, {
      will: { topic: 'tele/plug1/LWT', payload: Buffer.from('Offline'), qos: 1, retain: true },
    });
    await c.publishAsync('tele/plug1/LWT', 'Online', { qos: 1, retain: true });
    await c.publishAsync('stat/plug1/POWER', 'ON', { qos: 1 });
    await waitFor(() => edge.states.get('switch.plug_one')?.state === 'on', 3000, 'on');
    c.stream.destroy();
    await waitFor(() => edge.states.get('switch.plug_one')?.state === 'unavailable', 3000, 'unavailable after will');
    c.end(true);
  });
});
