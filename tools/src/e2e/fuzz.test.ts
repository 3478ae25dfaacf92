import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import type { Edge } from '@smarthome/edge/edge';
import { arbitraryFor, type JsonSchema } from './fuzz/arbitrary.ts';
import {
  HOSTILE_PARAMS,
  bodyArbitrary,
  fillPath,
  hostileBodies,
  pathParams,
  send,
  verdict,
  writeOperations,
  type FuzzRequest,
  type Operation,
} from './fuzz/requests.ts';
import { until } from './support.ts';

/**
 * Standing fuzz test (issue #13): every write route of the cloud (taken from its running
 * /openapi.json, so a new route is fuzzed without touching this file) and of the edge's local
 * API gets bodies generated from its JSON schema plus a hostile set (deep nesting, huge strings,
 * NUL, wrong types, > 1 MiB, wrong Content-Type) and hostile path parameters, on a cloud with a
 * real paired edge so tunnel-backed routes run end to end. Path parameters name real resources
 * most of the time, so handlers get past their lookups. The rule: no 5xx, and every error is a
 * JSON body of the spec's shape.
 *
 * Seeded and bounded: FUZZ_RUNS generated requests per route (default 8), FUZZ_SEED (default
 * 13). A nightly-size run: FUZZ_RUNS=500 npx vitest run tools/src/e2e/fuzz.test.ts
 */
const RUNS = Number(process.env.FUZZ_RUNS) || 8;
const SEED = Number(process.env.FUZZ_SEED) || 13;
/** generated requests take up to ~100 ms each on a loaded machine with PostgreSQL: the time limit grows with FUZZ_RUNS */
const TIME_LIMIT_MS = 120_000 + RUNS * 60 * 100;
const FLEET_TOKEN = 'fuzz-fleet-token';
const DEMO_LAMP = 'light.demo_living_room_lamp';

let cloud: TestCloud;
let edge: Edge;
const data = tempDir('fuzz-edge-');
/** auth header per scheme, and the values real resources give each path parameter */
const cloudSide = { base: '', auth: {} as Record<string, string>, org: '', params: {} as Record<string, string> };
const edgeSide = { base: '', auth: {} as Record<string, string>, org: '', params: {} as Record<string, string> };

beforeAll(async () => {
  cloud = await startTestCloud({ fleetToken: FLEET_TOKEN });
  const owner = await cloud.user();
  const member = await cloud.user();
  const as = { token: owner.token };
  const ok = async <T = any>(res: Promise<{ status: number; body: T; text: string }>) => {
    const r = await res;
    if (r.status >= 300) throw new Error(`fixture failed: ${r.status} ${r.text}`);
    return r.body as any;
  };
  const created = await ok(cloud.post('/v1/edges', { ...as, body: { name: 'Fuzz home' } }));
  const edgeId = created.edge.id as number;
  edge = await startEdge(data.dir, { cloudUrl: cloud.url, token: created.token });
  await until(
    async () => edge.link?.connected && (await cloud.get(`/v1/edges/${edgeId}`, as)).body?.status === 'online',
  );
  const flow = await ok(cloud.post('/v1/config_flow', { ...as, body: { handler: 'demo', edge_id: edgeId } }));
  const entry = await ok(cloud.post(`/v1/config_flow/${flow.flowId}/advance`, { ...as, body: { name: 'Demo' } }));
  await until(async () => (await cloud.get(`/v1/entities/states/${DEMO_LAMP}`, as)).status === 200);
  const openFlow = await ok(cloud.post('/v1/config_flow', { ...as, body: { handler: 'demo', edge_id: edgeId } }));
  const hooked = await ok(
    cloud.post('/v1/automations', {
      ...as,
      body: { edge_id: edgeId, alias: 'hook', trigger: [{ platform: 'webhook' }], action: [{ event: 'fuzzed' }] },
    }),
  );
  const replaced = await ok(
    cloud.post('/v1/automations', {
      ...as,
      body: { edge_id: edgeId, alias: 'to replace', trigger: [{ platform: 'webhook' }], action: [] },
    }),
  );
  const org = await ok(cloud.post('/v1/organizations', { ...as, body: { name: 'Fuzz org' } }));
  const invited = await ok(
    cloud.post(`/v1/organizations/${org.id}/invitations`, { ...as, body: { email: member.email, role: 'member' } }),
  );
  await ok(cloud.post(`/v1/invitations/${invited.token}/accept`, { token: member.token }));
  const pending = await ok(
    cloud.post(`/v1/organizations/${org.id}/invitations`, { ...as, body: { email: 'pending@example.test' } }),
  );
  const share = await ok(
    cloud.post(`/v1/organizations/${org.id}/shares`, {
      ...as,
      body: { resource_type: 'entity', resource_id: DEMO_LAMP },
    }),
  );
  const zone = await ok(
    cloud.post('/v1/zones', {
      ...as,
      body: { name: 'Home', icon: 'mdi:home', latitude: 1, longitude: 2, radius: 100 },
    }),
  );
  const dashboard = await ok(
    cloud.put('/v1/ui-dashboard', { ...as, body: { name: 'main', config: { views: [{ title: 'v', cards: [] }] } } }),
  );
  const transfer = await ok(
    cloud.post('/v1/transfers', {
      ...as,
      body: { to_email: member.email, resource_type: 'zone', resource_id: String(zone.id) },
    }),
  );
  const voip = await ok(
    cloud.post('/v1/voip-accounts', {
      ...as,
      body: { name: 'sip', server: 'sip.example.test', username: 'u', password: 'p' },
    }),
  );
  const pat = await ok(cloud.post('/v1/account/tokens', { ...as, body: { name: 'fuzz' } }));
  Object.assign(cloudSide, {
    base: cloud.url,
    auth: { bearer: owner.token, edge: created.token, fleet: FLEET_TOKEN },
    org: org.id,
    params: {
      // by the collection the parameter follows (/v1/zones/{id}), then by name
      tokens: String(pat.id),
      organizations: org.id,
      zones: String(zone.id),
      'ui-dashboard': String(dashboard.id),
      transfers: String(transfer.id),
      'voip-accounts': String(voip.id),
      edges: String(edgeId),
      config_entries: String(entry.result.config_entry_id),
      automations: String(replaced.id),
      user_id: member.id,
      invitation_id: String(pending.id),
      token: pending.token,
      share_id: String(share.id),
      flowId: openFlow.flowId,
      entity_id: DEMO_LAMP,
      domain: 'light',
      service: 'turn_on',
      webhook_id: hooked.webhook_id,
    },
  });
  // the edge's own local API, with a local token and resources of its own
  const local = edge.tokens.create('fuzz').token;
  const edgeBase = `http://127.0.0.1:${edge.ports.http}`;
  const localPost = async (path: string, body: unknown) => {
    const res = await fetch(edgeBase + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${local}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`edge fixture failed: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const localFlow = await localPost('/v1/config_flow', { handler: 'demo' });
  const localAutomation = await localPost('/v1/automations', {
    alias: 'local',
    trigger: [{ platform: 'webhook' }],
    action: [],
  });
  const mqttUser = await localPost('/v1/mqtt/credentials', { username: 'fuzz-device' });
  Object.assign(edgeSide, {
    base: edgeBase,
    auth: { bearer: local },
    params: {
      automations: localAutomation.id,
      config_entries: String(entry.result.config_entry_id),
      username: mqttUser.username,
      flowId: localFlow.flowId,
      entity_id: DEMO_LAMP,
      domain: 'light',
      service: 'turn_on',
      webhook_id: localAutomation.webhook_id,
    },
  });
}, 60_000);

afterAll(async () => {
  await edge?.stop();
  await cloud?.stop();
  data.cleanup();
});

type Side = typeof cloudSide;

/** The real value for a path parameter: by the collection it follows, else by its name. */
function realParam(side: Side, op: Operation, name: string): string | undefined {
  const segments = op.path.split('/');
  const collection = segments[segments.indexOf(`{${name}}`) - 1];
  return side.params[collection] ?? side.params[name];
}

function baseRequest(side: Side, op: Operation, params: Record<string, string>, label: string): FuzzRequest {
  const headers: Record<string, string> = {};
  const token = side.auth[op.auth];
  if (token) headers.authorization = `Bearer ${token}`;
  return { method: op.method, path: fillPath(op.path, params), headers, label };
}

/** The router reads this route's body before its handler runs (it documents 415), so a bad body decides the answer. */
const readsJsonBody = (op: Operation) => op.op.responses?.['415'] !== undefined;

/** Deleting the shared fixtures would leave later routes nothing real to work on: deletes get made-up ids only. */
const usesRealIds = (op: Operation) => op.method !== 'DELETE';

async function fuzzSide(
  side: Side,
  name: string,
): Promise<{ failures: string[]; undocumented: Set<string>; requests: number }> {
  const doc = (await (await fetch(`${side.base}/openapi.json`)).json()) as any;
  const components: Record<string, JsonSchema> = doc.components?.schemas ?? {};
  const failures = new Set<string>();
  const undocumented = new Set<string>();
  let requests = 0;
  const judge = async (op: Operation, req: FuzzRequest, expectStatus?: number) => {
    requests++;
    let reason: string | null;
    try {
      const res = await send(side.base, req);
      reason = verdict(op, res, undocumented);
      if (!reason && expectStatus && res.status !== expectStatus)
        reason = `answered ${res.status} ${res.text.slice(0, 100)}, expected ${expectStatus}`;
    } catch (err) {
      reason = `no answer: ${(err as Error).message}`;
    }
    if (reason) failures.add(`${name}: ${op.method} ${op.path} [${req.label}] → ${reason}`);
    return reason === null;
  };
  for (const op of writeOperations(doc)) {
    const names = pathParams(op.path);
    const real = Object.fromEntries(
      names.map((n) => [n, usesRealIds(op) ? (realParam(side, op, n) ?? 'x') : HOSTILE_PARAMS[0]]),
    );
    const sample = op.body ? fc.sample(arbitraryFor(op.body, components), { seed: SEED, numRuns: 1 })[0] : undefined;
    // the hostile set: bodies around a valid sample, then hostile values for each path parameter
    if (op.body) {
      for (const hostile of hostileBodies(sample)) {
        const req = baseRequest(side, op, real, hostile.label);
        if (hostile.contentType) req.headers['content-type'] = hostile.contentType;
        req.body = hostile.body;
        await judge(op, req, readsJsonBody(op) ? hostile.status : undefined);
      }
    }
    for (const param of names) {
      for (const value of HOSTILE_PARAMS) {
        const req = baseRequest(side, op, { ...real, [param]: value }, `${param}=${value.slice(0, 20)}`);
        if (sample !== undefined) {
          req.headers['content-type'] = 'application/json';
          req.body = JSON.stringify(sample);
        }
        await judge(op, req);
      }
    }
    // generated requests: a schema-driven body, real or made-up path parameters, with or without the organization header
    const paramArb = fc.record(
      Object.fromEntries(
        names.map((n) => [
          n,
          fc.oneof(
            { arbitrary: fc.constant(real[n]), weight: 4 },
            { arbitrary: fc.constantFrom(...HOSTILE_PARAMS), weight: 1 },
            { arbitrary: fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent), weight: 1 },
          ),
        ]),
      ),
    );
    const requestArb = fc.record({
      params: paramArb,
      body: op.body ? bodyArbitrary(op.body, components) : fc.constant(undefined),
      org: op.orgContext && side.org ? fc.boolean() : fc.constant(false),
    });
    await fc.check(
      fc.asyncProperty(requestArb, async ({ params, body, org }) => {
        const req = baseRequest(
          side,
          op,
          params as Record<string, string>,
          `generated ${JSON.stringify(body)?.slice(0, 120)}`,
        );
        if (op.body) {
          req.headers['content-type'] = 'application/json';
          req.body = JSON.stringify(body);
        }
        if (org) req.headers['x-organization-id'] = side.org;
        return judge(op, req);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }
  return { failures: [...failures], undocumented, requests };
}

describe('fuzzing every write route from its schema (issue #13)', () => {
  it(
    'the cloud answers no 5xx, and every error in the shape the spec documents',
    async () => {
      const { failures, undocumented, requests } = await fuzzSide(cloudSide, 'cloud');
      expect(requests).toBeGreaterThan(500);
      expect(failures).toEqual([]);
      expect([...undocumented]).toEqual([]);
      expect((await cloud.get('/healthz')).body).toEqual({ status: 'ok' });
      expect(edge.link?.connected).toBe(true);
    },
    TIME_LIMIT_MS,
  );

  it(
    "the edge's local API answers no 5xx, and every error in the shape the spec documents",
    async () => {
      const { failures, undocumented, requests } = await fuzzSide(edgeSide, 'edge');
      expect(requests).toBeGreaterThan(100);
      expect(failures).toEqual([]);
      expect([...undocumented]).toEqual([]);
      expect((await fetch(`${edgeSide.base}/healthz`)).status).toBe(200);
    },
    TIME_LIMIT_MS,
  );
});
