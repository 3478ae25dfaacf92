import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import { tempDir } from '@smarthome/edge/testing/edge';
import type { Edge } from '@smarthome/edge/edge';
import { mqttLamp, pairEdge, until, type Cleanups } from './support.ts';

/**
 * Node-RED, the second real Home Assistant client: a real Node-RED 5 runtime in-process with
 * node-red-contrib-home-assistant-websocket, one HA server config pointing at an edge and one
 * at the cloud. For each: an events:state node receives the lamp's change (published over
 * MQTT), and an action node (api-call-service) turns the lamp on.
 */
const require = createRequire(import.meta.url);
const DESK = 'light.desk_lamp_desk';

const cleanups: Cleanups = [];
let cloud: TestCloud;
let edge: Edge;
let lamp: Awaited<ReturnType<typeof mqttLamp>>;
/** what the flows' sink function nodes saw: [flow, msg] */
const received: Array<{ flow: string; payload: unknown; data: any }> = [];
let RED: any;

/** The flow for one server: state node → sink, and an action node turning DESK on. */
function flow(key: 'edge' | 'cloud') {
  return [
    { id: `srv-${key}`, type: 'server', name: key, addon: false },
    { id: `tab-${key}`, type: 'tab', label: key },
    {
      // the node's current config (version 6), as the editor saves it
      id: `state-${key}`,
      type: 'server-state-changed',
      z: `tab-${key}`,
      server: `srv-${key}`,
      name: `${key} desk`,
      version: 6,
      entities: { entity: [DESK], substring: [], regex: [] },
      outputInitially: false,
      stateType: 'str',
      ifState: '',
      ifStateType: 'str',
      ifStateOperator: 'is',
      outputOnlyOnStateChange: true,
      for: '0',
      forType: 'num',
      forUnits: 'minutes',
      ignorePrevStateNull: false,
      ignorePrevStateUnknown: false,
      ignorePrevStateUnavailable: false,
      ignoreCurrentStateUnknown: false,
      ignoreCurrentStateUnavailable: false,
      outputProperties: [
        { property: 'payload', propertyType: 'msg', value: '', valueType: 'entityState' },
        { property: 'data', propertyType: 'msg', value: '', valueType: 'eventData' },
      ],
      wires: [[`sink-${key}`]],
    },
    {
      id: `sink-${key}`,
      type: 'function',
      z: `tab-${key}`,
      name: 'sink',
      func: `global.get('sink')(${JSON.stringify(key)}, msg); return null;`,
      outputs: 0,
      wires: [],
    },
    {
      // version 7, as the editor saves it
      id: `action-${key}`,
      type: 'api-call-service',
      z: `tab-${key}`,
      server: `srv-${key}`,
      name: `${key} turn on`,
      version: 7,
      action: 'light.turn_on',
      domain: 'light',
      service: 'turn_on',
      floorId: [],
      areaId: [],
      deviceId: [],
      entityId: [DESK],
      labelId: [],
      data: '',
      dataType: 'jsonata',
      mergeContext: '',
      mustacheAltTags: false,
      outputProperties: [],
      queue: 'none',
      blockInputOverrides: false,
      wires: [[]],
    },
  ];
}

beforeAll(async () => {
  cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  const a = await cloud.user();
  ({ edge } = await pairEdge(cloud, cleanups, a.token, 'House'));
  lamp = await mqttLamp(edge, cleanups, 'desk', 'Desk lamp');
  await until(
    async () => (await cloud.get(`/v1/entities/states/${DESK}`, { token: a.token })).body?.state === 'off',
    10_000,
    'lamp mirrored',
  );
  const pat = (await cloud.post('/v1/account/tokens', { token: a.token, body: { name: 'node-red' } })).body
    .token as string;

  const userDir = tempDir();
  cleanups.push(userDir.cleanup);
  const flows = [...flow('edge'), ...flow('cloud')];
  fs.writeFileSync(path.join(userDir.dir, 'flows.json'), JSON.stringify(flows));
  // credentialSecret false: credentials are plain JSON, written before the runtime starts
  fs.writeFileSync(
    path.join(userDir.dir, 'flows_cred.json'),
    JSON.stringify({
      'srv-edge': { host: `http://127.0.0.1:${edge.ports.http}`, access_token: edge.tokens.create('node-red').token },
      'srv-cloud': { host: cloud.url, access_token: pat },
    }),
  );
  RED = require('node-red');
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  RED.init(server, {
    userDir: userDir.dir,
    flowFile: 'flows.json',
    credentialSecret: false,
    uiPort: (server.address() as AddressInfo).port,
    httpAdminRoot: '/admin',
    httpNodeRoot: false,
    disableEditor: true,
    nodesDir: [path.dirname(require.resolve('node-red-contrib-home-assistant-websocket/package.json'))],
    functionGlobalContext: {
      sink: (key: string, msg: { payload: unknown; data: unknown }) =>
        received.push({ flow: key, payload: msg.payload, data: msg.data }),
    },
    logging: { console: { level: process.env.NR_LOG ?? 'warn' } },
  });
  await RED.start();
  cleanups.push(() => RED.stop());
}, 90_000);
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
});

/** Until the flows are running (the HA client connects on its own schedule after that). */
async function ready(key: string) {
  await until(() => RED.nodes.getNode(`state-${key}`) && RED.nodes.getNode(`action-${key}`), 20_000, `${key} nodes`);
}

describe.each(['edge', 'cloud'] as const)('Node-RED against the %s', (key) => {
  it("an events:state node receives the lamp's change published over MQTT", async () => {
    await ready(key);
    // the client connects on its own schedule: publish until the node reports a change
    let on = false;
    await until(
      async () => {
        on = !on;
        await lamp.client.publishAsync('desk/state', on ? 'ON' : 'OFF', { qos: 1 });
        await new Promise((r) => setTimeout(r, 300));
        return received.some((m) => m.flow === key);
      },
      30_000,
      `${key}: a state message`,
    );
    const msg = received.find((m) => m.flow === key)!;
    expect(['on', 'off']).toContain(msg.payload);
    expect(msg.data).toMatchObject({ entity_id: DESK, new_state: { entity_id: DESK } });
  });

  it('an action node turns the lamp on', async () => {
    await ready(key);
    lamp.commands.length = 0;
    RED.nodes.getNode(`action-${key}`).receive({ payload: {} });
    await until(() => lamp.commands.includes('desk/set ON'), 10_000, `${key}: the lamp's command`);
  });
});
