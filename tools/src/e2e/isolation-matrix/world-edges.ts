import { expect } from 'vitest';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
import type { Edge } from '@smarthome/edge/edge';
import { mqttLamp, pairEdge, until } from '../support.ts';
import { ATTIC, DESK, HALL, PORCH, ok, type Lamp, type World } from './world-model.ts';

async function lamp(
  cleanups: World['cleanups'],
  edge: Edge,
  key: string,
  device: string,
  manufacturer: string,
): Promise<Lamp> {
  const { client, commands } = await mqttLamp(edge, cleanups, key, device, { manufacturer });
  return { entityId: `light.${device.toLowerCase().replace(/ /g, '_')}_${key}`, client, commands };
}

/** The demo integration on an edge (a config entry), and a second demo flow left open (started first: the demo allows one entry). */
async function demoEntryAndOpenFlow(
  cloud: TestCloud,
  token: string,
  edgeId: number,
  title: string,
  org?: string,
): Promise<{ entry: number; flow: string }> {
  const open = ok(
    await cloud.post('/v1/config_flow', { token, org, body: { handler: 'demo', edge_id: edgeId } }),
    200,
    'open flow',
  );
  expect(open.body.type).toBe('form');
  const start = ok(
    await cloud.post('/v1/config_flow', { token, org, body: { handler: 'demo', edge_id: edgeId } }),
    200,
    'demo flow',
  );
  const done = ok(
    await cloud.post(`/v1/config_flow/${start.body.flowId}/advance`, { token, body: { name: title } }),
    200,
    'demo entry',
  );
  expect(done.body).toMatchObject({ type: 'create_entry' });
  return { entry: done.body.result.config_entry_id as number, flow: open.body.flowId as string };
}

const automation = (alias: string, edgeId: number, secret: string) => ({
  edge_id: edgeId,
  alias,
  trigger: [{ platform: 'webhook' }],
  action: [
    { call_url: { method: 'POST', url: 'http://127.0.0.1:9/hook', headers: { Authorization: `Bearer ${secret}` } } },
  ],
});

/**
 * Three edges paired over the tunnel (A's, O's, X's) with MQTT-discovered lamps (distinct entity
 * ids), the demo integration and an automation on A's and O's. `deviceOf` finds a lamp's device
 * id, for the resources made after this.
 */
export async function edgesAndLamps(cloud: TestCloud, cleanups: World['cleanups'], users: World['users'], O: string) {
  const { A, X } = users;
  const [edgeA, edgeO, edgeX] = await Promise.all([
    pairEdge(cloud, cleanups, A.token, 'mx A home'),
    pairEdge(cloud, cleanups, A.token, 'mx O home', O),
    pairEdge(cloud, cleanups, X.token, 'mx X home'),
  ]);
  await until(
    async () =>
      edgeA.edge.link?.connected &&
      edgeO.edge.link?.connected &&
      edgeX.edge.link?.connected &&
      (await cloud.get(`/v1/edges/${edgeA.id}`, { token: A.token })).body?.status === 'online' &&
      (await cloud.get(`/v1/edges/${edgeO.id}`, { token: A.token, org: O })).body?.status === 'online' &&
      (await cloud.get(`/v1/edges/${edgeX.id}`, { token: X.token })).body?.status === 'online',
    10_000,
    'edges online',
  );
  const [desk, attic, hall, porch] = await Promise.all([
    lamp(cleanups, edgeA.edge, 'desk', 'Desk lamp', 'MxDeskCo'),
    lamp(cleanups, edgeA.edge, 'attic', 'Attic lamp', 'MxAtticCo'),
    lamp(cleanups, edgeO.edge, 'hall', 'Hall lamp', 'MxHallCo'),
    lamp(cleanups, edgeX.edge, 'porch', 'Porch lamp', 'MxPorchCo'),
  ]);
  expect([desk.entityId, attic.entityId, hall.entityId, porch.entityId]).toEqual([DESK, ATTIC, HALL, PORCH]);
  await until(
    async () => {
      for (const id of [DESK, ATTIC, HALL])
        if ((await cloud.get(`/v1/entities/states/${id}`, { token: A.token })).body?.state !== 'off') return false;
      return (await cloud.get(`/v1/entities/states/${PORCH}`, { token: X.token })).body?.state === 'off';
    },
    10_000,
    'lamps mirrored',
  );
  const demoA = await demoEntryAndOpenFlow(cloud, A.token, edgeA.id, 'mx A demo');
  const demoO = await demoEntryAndOpenFlow(cloud, A.token, edgeO.id, 'mx O demo', O);
  const autoA = ok(
    await cloud.post('/v1/automations', {
      token: A.token,
      body: automation('mx A automation', edgeA.id, 'mx-secret-A'),
    }),
    201,
    'automation A',
  ).body;
  const autoO = ok(
    await cloud.post('/v1/automations', {
      token: A.token,
      org: O,
      body: automation('mx O automation', edgeO.id, 'mx-secret-O'),
    }),
    201,
    'automation O',
  ).body;
  const deviceOf = async (edgeId: number, manufacturer: string, org?: string) =>
    (
      ok(await cloud.get(`/v1/devices?edge_id=${edgeId}`, { token: A.token, org }), 200, 'devices').body as {
        id: number;
        manufacturer: string;
      }[]
    ).find((d) => d.manufacturer === manufacturer)!.id;
  return { edgeA, edgeO, edgeX, desk, attic, hall, porch, demoA, demoO, autoA, autoO, deviceOf };
}
