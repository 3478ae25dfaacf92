import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MqttCredentials } from '@smarthome/protocol';
import type { Edge } from '../edge.ts';
import { collector, connect, granted, recordingLogger, startEdge, tempDir, waitFor } from '../test-helpers.ts';

let edge: Edge;
let tmp: ReturnType<typeof tempDir>;
const logs = recordingLogger();

const plugConfig = (n: number) => JSON.stringify({
  name: `Plug ${n}`, uniq_id: `plug${n}`, cmd_t: `cmnd/plug${n}/POWER`, stat_t: `stat/plug${n}/POWER`,
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

beforeAll(async () => {
  tmp = tempDir();
  edge = await startEdge(tmp.dir, { logger: logs });
});
afterAll(async () => {
  await edge?.stop();
  tmp?.cleanup();
});

describe('MQTT ownership', () => {
  it("deleting the owning user releases its configs (also after a restart): another user claims one by publishing it", async () => {
    const old = await edge.createMqttCredentials({ username: 'old' });
    await announce(old, 1);
    await announce(old, 2);
    const replacement = await edge.createMqttCredentials({ username: 'replacement' });

    // still connected when deleted, with a will that would re-announce plug 2
    const lingering = await connect(edge, old, { will: { topic: configTopic(2), payload: Buffer.from(plugConfig(2)), qos: 1, retain: true } });
    const closed = new Promise<void>((resolve) => lingering.once('close', () => resolve()));
    expect(edge.deleteMqttUser('old')).toBe(true);
    await closed;
    await waitFor(() => logs.warnings().includes(`mqtt: refused publish to ${configTopic(2)} by old (deleted): not authenticated`), 3000, 'the will refused');
    expect([ownerOf('switch.plug_1'), ownerOf('switch.plug_2')]).toEqual([null, null]);

    await edge.stop();
    edge = await startEdge(tmp.dir, { logger: logs });
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
