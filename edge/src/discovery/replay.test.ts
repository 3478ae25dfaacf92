import { describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { Edge } from '../edge.ts';
import { waitFor } from '../testing/edge.ts';
import { edgeWithDevice, publish, stateWhere } from './fixture.ts';

/**
 * A new entity takes its topics' retained messages (messages.ts replayRetained), unless a live
 * message reached it while the replay was reading them: that one is newer. Real Aedes, real mqtt.js;
 * the broker's retained read is held open to let the live message through first.
 */

let edge: Edge;
let device: MqttClient;

edgeWithDevice({ username: 'replay' }, (started) => ({ edge, device } = started));

/** Announces a sensor on `topic` while the replay's reads wait for `gate`. */
async function announceHeld(id: string, topic: string, gate: Promise<void>): Promise<() => void> {
  const broker = edge.broker;
  const read = broker.retained.bind(broker);
  broker.retained = async (t) => {
    const found = await read(t);
    await gate;
    return found;
  };
  await publish(device, `homeassistant/sensor/${id}/config`, { name: id, uniq_id: id, stat_t: topic }, false);
  await waitFor(() => edge.registry.getEntity(`sensor.${id}`), 3000, 'entity');
  return () => {
    broker.retained = read;
  };
}

describe('retained replay of a new entity', () => {
  it('applies the retained state when nothing newer arrived', async () => {
    await publish(device, 'replay/a', '1', true);
    const restore = await announceHeld('replay_a', 'replay/a', Promise.resolve());
    try {
      expect((await stateWhere(edge, 'sensor.replay_a', (s) => s.state !== null)).state).toBe('1');
    } finally {
      restore();
    }
  });

  it('keeps a live message that arrived while the retained one was being read', async () => {
    await publish(device, 'replay/b', '1', true);
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const restore = await announceHeld('replay_b', 'replay/b', gate);
    try {
      await publish(device, 'replay/b', '2', false);
      await stateWhere(edge, 'sensor.replay_b', (s) => s.state === '2');
      release();
      await new Promise((r) => setTimeout(r, 100));
      expect(edge.states.get('sensor.replay_b')?.state).toBe('2');
    } finally {
      release();
      restore();
    }
  });
});
