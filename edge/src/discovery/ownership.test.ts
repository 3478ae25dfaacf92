import { beforeAll, describe, expect, it } from 'vitest';
import type { MqttCredentials } from '@smarthome/protocol';
import type { Edge } from '../edge.ts';
import { collector, connect, granted, recordingLogger, waitFor } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

let edge: Edge;
const logs = recordingLogger();

const plugConfig = (n: number) =>
  JSON.stringify({
    name: `Plug ${n}`,
    uniq_id: `plug${n}`,
    cmd_t: `cmnd/plug${n}/POWER`,
    stat_t: `stat/plug${n}/POWER`,
    dev: { ids: `plug-${n}`, name: `Plug ${n}` },
  });
const configTopic = (n: number) => `homeassistant/switch/plug${n}/config`;
const ownerOf = (entityId: string) => edge.registry.getEntity(entityId)?.config.owner;

/** A device user announcing plug n (retained, as Tasmota does); returns once the entity exists. */
async function announce(creds: MqttCredentials, n: number): Promise<void> {
  const c = await connect(edge, creds);
  await c.publishAsync(configTopic(n), plugConfig(n), { qos: 1, retain: true });
  await c.endAsync();
  await waitFor(() => ownerOf(`switch.plug_${n}`) === creds.username, 3000, `plug ${n} owned by ${creds.username}`);
}

const fixture = useEdge({ logger: logs }, (started) => {
  edge = started;
});

describe('MQTT ownership', () => {
  it('deleting the owning user releases its configs (also after a restart): another user claims one by publishing it', async () => {
    const old = await edge.createMqttCredentials({ username: 'old' });
    await announce(old, 1);
    await announce(old, 2);
    const replacement = await edge.createMqttCredentials({ username: 'replacement' });

    // still connected when deleted, with a will that would re-announce plug 2
    const lingering = await connect(edge, old, {
      will: { topic: configTopic(2), payload: Buffer.from(plugConfig(2)), qos: 1, retain: true },
    });
    const closed = new Promise<void>((resolve) => lingering.once('close', () => resolve()));
    expect(edge.deleteMqttUser('old')).toBe(true);
    await closed;
    await waitFor(
      () => logs.warnings().includes(`mqtt: refused publish to ${configTopic(2)} by old (deleted): not authenticated`),
      3000,
      'the will refused',
    );
    expect([ownerOf('switch.plug_1'), ownerOf('switch.plug_2')]).toEqual([null, null]);

    edge = await fixture.restart();
    expect([ownerOf('switch.plug_1'), ownerOf('switch.plug_2')]).toEqual([null, null]);

    const c = await connect(edge, replacement);
    await c.publishAsync(configTopic(1), plugConfig(1), { qos: 1, retain: true });
    await waitFor(() => ownerOf('switch.plug_1') === 'replacement', 3000, 'plug 1 claimed');
    const inbox = await collector(c, 'cmnd/plug1/POWER');
    await edge.callService('switch', 'turn_on', 'switch.plug_1');
    expect(await inbox.next(1)).toEqual([{ topic: 'cmnd/plug1/POWER', payload: 'ON' }]);
    await c.endAsync();

    // claimed again, so refused to others; plug 2 stays free
    const other = await connect(edge, await edge.createMqttCredentials({ username: 'other' }));
    expect(await granted(other, 'cmnd/plug1/POWER')).toBe(128);
    expect(await granted(other, 'cmnd/plug2/POWER')).toBe(1);
    await other.endAsync();
    expect(ownerOf('switch.plug_2')).toBe(null);
  });
});

describe('MQTT ownership through the local API', () => {
  let token: string;
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${edge.ports.http}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  beforeAll(() => {
    token = edge.tokens.create('ownership test').token;
  });

  it('lists who owns each discovery config', async () => {
    const owner = await edge.createMqttCredentials({ username: 'lister' });
    await announce(owner, 3);
    const r = await api('GET', '/v1/mqtt/owners');
    expect(r.status).toBe(200);
    const deviceId = edge.registry.getEntity('switch.plug_3')?.device_registry_id;
    expect(r.body.find((o: any) => o.discovery_topic === configTopic(3))).toEqual({
      discovery_topic: configTopic(3),
      owner: 'lister',
      device_id: deviceId,
      entity_ids: ['switch.plug_3'],
      command_topics: ['cmnd/plug3/POWER'],
    });
    expect(r.body.find((o: any) => o.discovery_topic === configTopic(2))).toMatchObject({
      owner: null,
      entity_ids: ['switch.plug_2'],
    });
  });

  it("reassigns a device: the new user's publishes and subscriptions work, the old user's are refused", async () => {
    const first = await edge.createMqttCredentials({ username: 'first' });
    const second = await edge.createMqttCredentials({ username: 'second' });
    await announce(first, 4);
    const deviceId = edge.registry.getEntity('switch.plug_4')?.device_registry_id;

    const r = await api('PUT', '/v1/mqtt/owners', { device_id: deviceId, username: 'second' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      {
        discovery_topic: configTopic(4),
        owner: 'second',
        device_id: deviceId,
        entity_ids: ['switch.plug_4'],
        command_topics: ['cmnd/plug4/POWER'],
      },
    ]);
    expect(ownerOf('switch.plug_4')).toBe('second');

    const newcomer = await connect(edge, second);
    const inbox = await collector(newcomer, 'cmnd/plug4/POWER');
    await newcomer.publishAsync(configTopic(4), plugConfig(4).replaceAll('Plug 4', 'Plug four'), {
      qos: 1,
      retain: true,
    });
    await waitFor(
      () => edge.registry.getEntity('switch.plug_4')?.name === 'Plug four',
      3000,
      'the new owner re-announcing',
    );
    await edge.callService('switch', 'turn_on', 'switch.plug_4');
    expect(await inbox.next(1)).toEqual([{ topic: 'cmnd/plug4/POWER', payload: 'ON' }]);

    const before = logs.warnings().length;
    const former = await connect(edge, first);
    expect(await granted(former, 'cmnd/plug4/POWER')).toBe(128);
    await former.publishAsync(configTopic(4), plugConfig(4), { qos: 1, retain: true });
    await former.publishAsync('cmnd/plug4/POWER', 'OFF', { qos: 1 });
    expect(logs.warnings().slice(before)).toEqual([
      'mqtt: refused subscription to cmnd/plug4/POWER by first: command topic owned by second',
      `mqtt: refused publish to ${configTopic(4)} by first: discovery config owned by second`,
      'mqtt: refused publish to cmnd/plug4/POWER by first: command topic owned by second',
    ]);
    expect(edge.registry.getEntity('switch.plug_4')?.name).toBe('Plug four');
    await new Promise((r2) => setTimeout(r2, 100));
    expect(inbox.messages).toHaveLength(1);
    await former.endAsync();
    await newcomer.endAsync();
  });

  it('reassigns or releases one config by its topic, also for the cloud through the tunnel (trusted call)', async () => {
    await edge.createMqttCredentials({ username: 'third' });
    const r = await api('PUT', '/v1/mqtt/owners', { discovery_topic: configTopic(4), username: 'third' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject([{ discovery_topic: configTopic(4), owner: 'third' }]);
    const viaCloud = await edge.handleTrusted(
      new Request('http://edge.internal/v1/mqtt/owners', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ discovery_topic: configTopic(4), username: null }),
      }),
    );
    expect(viaCloud.status).toBe(200);
    expect(await viaCloud.json()).toMatchObject([{ discovery_topic: configTopic(4), owner: null }]);
    expect(ownerOf('switch.plug_4')).toBe(null);
  });

  it('an integration user re-publishing an owned config takes it over', async () => {
    expect(ownerOf('switch.plug_3')).toBe('lister');
    const c = await connect(edge, await edge.createMqttCredentials({ username: 'bridge', role: 'integration' }));
    await c.publishAsync(configTopic(3), plugConfig(3), { qos: 1, retain: true });
    await waitFor(() => ownerOf('switch.plug_3') === 'bridge', 3000, 'plug 3 taken over');
    await c.endAsync();
    const back = await api('PUT', '/v1/mqtt/owners', { discovery_topic: configTopic(3), username: 'lister' });
    expect(back.body).toMatchObject([{ owner: 'lister' }]);
  });

  it('answers 400/404 {message} for what it cannot do, and changes nothing', async () => {
    const deviceId = edge.registry.getEntity('switch.plug_3')?.device_registry_id;
    const cases: [unknown, number, string][] = [
      [{ device_id: deviceId, username: 'nobody' }, 400, 'MQTT user nobody not found'],
      [
        { device_id: deviceId, discovery_topic: configTopic(3), username: 'lister' },
        400,
        'give exactly one of device_id or discovery_topic',
      ],
      [{ username: 'lister' }, 400, 'give exactly one of device_id or discovery_topic'],
      [{ device_id: deviceId }, 400, expect.stringMatching(/^username: /)],
      [{ device_id: 'x', username: 'lister' }, 400, expect.stringMatching(/^device_id: /)],
      [{ device_id: 99999, username: 'lister' }, 404, 'device 99999 has no MQTT discovery configs'],
      [
        { discovery_topic: 'homeassistant/switch/nothing/config', username: 'lister' },
        404,
        'no discovery config on homeassistant/switch/nothing/config',
      ],
    ];
    for (const [body, status, message] of cases) {
      const r = await api('PUT', '/v1/mqtt/owners', body);
      expect([r.status, r.body], JSON.stringify(body)).toEqual([status, { message }]);
    }
    expect(ownerOf('switch.plug_3')).toBe('lister');
    const anonymous = await fetch(`http://127.0.0.1:${edge.ports.http}/v1/mqtt/owners`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect([anonymous.status, await anonymous.json()]).toEqual([401, { error: 'unauthorized' }]);
  });
});
