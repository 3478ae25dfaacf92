import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll } from 'vitest';
import type { CreateMqttCredentialsBody } from '@smarthome/protocol/edge-local';
import type { Edge, EdgeConfig } from '../edge.ts';
import { connect, startEdge, tempDir, waitFor } from '../testing/edge.ts';

/**
 * Test fixture of the discovery tests: an edge in a temp dir with one MQTT device user connected,
 * started before the file's tests and stopped after them; `use` receives both once started.
 */
export function edgeWithDevice(
  user: CreateMqttCredentialsBody,
  use: (started: { edge: Edge; device: MqttClient }) => void,
  config: Partial<EdgeConfig> = {},
): void {
  let tmp: ReturnType<typeof tempDir> | undefined;
  let edge: Edge | undefined;
  let device: MqttClient | undefined;
  beforeAll(async () => {
    tmp = tempDir();
    edge = await startEdge(tmp.dir, config);
    device = await connect(edge, await edge.createMqttCredentials(user));
    use({ edge, device });
  });
  afterAll(async () => {
    await device?.endAsync();
    await edge?.stop();
    tmp?.cleanup();
  });
}

/** Publishes a discovery config or message (JSON unless a string) with QoS 1. */
export const publish = (device: MqttClient, topic: string, payload: unknown, retain: boolean) =>
  device.publishAsync(topic, typeof payload === 'string' ? payload : JSON.stringify(payload), { qos: 1, retain });

type State = NonNullable<ReturnType<Edge['states']['get']>>;

/** The entity's state once `pred` holds for it (waits up to 3 s). */
export const stateWhere = (edge: Edge, id: string, pred: (s: State) => boolean) =>
  waitFor(
    () => {
      const s = edge.states.get(id);
      return s && pred(s) ? s : undefined;
    },
    3000,
    `state of ${id}`,
  );
