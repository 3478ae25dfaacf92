import { afterEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { MqttCredentials } from '@smarthome/protocol';
import { connect, startEdge, tempDir, waitFor } from '../testing/edge.ts';
import type { Edge } from '../edge.ts';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function retainedOn(edge: Edge, creds: MqttCredentials, filters: string[]): Promise<Record<string, string>> {
  const client: MqttClient = await connect(edge, creds);
  cleanups.push(() => client.endAsync());
  const got: Record<string, string> = {};
  client.on('message', (topic, payload, packet) => {
    if (packet.retain) got[topic] = payload.toString();
  });
  await client.subscribeAsync(filters, { qos: 1 });
  await new Promise((r) => setTimeout(r, 150));
  return got;
}

describe('retained messages', () => {
  it('survive a restart of the edge; a cleared topic stays cleared', async () => {
    const data = tempDir();
    cleanups.push(data.cleanup);
    const first = await startEdge(data.dir);
    const creds = await first.createMqttCredentials({ role: 'device' });
    const device = await connect(first, creds);
    await device.publishAsync('garage/door/state', 'closed', { qos: 1, retain: true });
    await device.publishAsync('garage/door/state', 'open', { qos: 1, retain: true });
    await device.publishAsync('porch/light/state', 'ON', { qos: 0, retain: true });
    await device.publishAsync('old/topic', 'x', { qos: 1, retain: true });
    await device.publishAsync('old/topic', '', { qos: 1, retain: true });
    await device.publishAsync('not/retained', 'y', { qos: 1 });
    await waitFor(async () => (await first.broker.retained('porch/light/state'))?.payload.toString() === 'ON');
    await device.endAsync();
    await first.stop();

    const second = await startEdge(data.dir);
    cleanups.push(() => second.stop());
    // an integration user may listen to everything; a device not to '#'
    const bridge = await second.createMqttCredentials({ role: 'integration' });
    expect(await retainedOn(second, bridge, ['#'])).toEqual({
      'garage/door/state': 'open',
      'porch/light/state': 'ON',
      'homeassistant/status': 'online',
    });
  });
});
