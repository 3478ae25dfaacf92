import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createCloud, type Cloud } from '@smarthome/cloud/cloud';
import { defaultCloudConfig } from '@smarthome/cloud/config';
import { createEdge, type Edge } from '@smarthome/edge/edge';
import { PortInUseError } from '@smarthome/edge/errors';
import { ensurePortalBuilt } from '@smarthome/web/serve/build';
import { Simulator } from './sim/simulator.ts';
import { KINDS } from './sim/kinds.ts';

/**
 * `pnpm start`: the whole system on one machine. An in-process cloud (data in <data>/cloud),
 * a demo account with a personal access token, one edge registered in the cloud and paired
 * with it (data in <data>/edge), the `demo` integration added through the cloud's config
 * flow, and the device simulator on the edge's broker. What must survive a restart (account,
 * PAT, edge id and token) lives in <data>/start.json (mode 0600); a second start reuses it.
 * stdout: the URLs, the token, example commands, then `ready {"http":…,"edge":…,"mqtt":…}`.
 */

const USAGE = `usage: pnpm start [--port 8080] [--edge-port 8123] [--mqtt-port 1883] [--data-dir ./data] [--devices ${KINDS.length}]
  --port       cloud HTTP port (0 = any free port)
  --edge-port  edge local API port (0 = any free port)
  --mqtt-port  edge MQTT broker port (0 = any free port)
  --data-dir   where the cloud and the edge keep their data (./data/cloud, ./data/edge, ./data/start.json)
  --devices    number of simulated MQTT devices (default: one of each kind)`;

const DEMO_EMAIL = 'demo@example.com';
const SIM_USER = 'simulator';

interface StartState {
  email: string;
  password: string;
  pat?: string;
  edge_id?: number;
  edge_token?: string;
}

interface ApiResult {
  status: number;
  body: any;
}

function fail(message: string, code = 1): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
}

function portArg(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    fail(`${flag} must be a port number (0-65535), got "${value}"\n${USAGE}`, 2);
  return Number(value);
}

function parse() {
  try {
    const { values } = parseArgs({
      options: {
        port: { type: 'string' },
        'edge-port': { type: 'string' },
        'mqtt-port': { type: 'string' },
        'data-dir': { type: 'string' },
        devices: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    }
    const devices = Number(values.devices ?? String(KINDS.length));
    if (!Number.isInteger(devices) || devices < 0 || devices > 1000) fail('--devices must be an integer 0-1000', 2);
    return {
      port: portArg(values.port ?? process.env.PORT, 8080, '--port'),
      edgePort: portArg(values['edge-port'] ?? process.env.EDGE_PORT, 8123, '--edge-port'),
      mqttPort: portArg(values['mqtt-port'] ?? process.env.MQTT_PORT, 1883, '--mqtt-port'),
      dataDir: path.resolve(values['data-dir'] ?? process.env.DATA_DIR ?? 'data'),
      devices,
    };
  } catch (err) {
    return fail(`${(err as Error).message}\n${USAGE}`, 2);
  }
}

function loadState(file: string): StartState | null {
  try {
    const s = JSON.parse(fs.readFileSync(file, 'utf8')) as StartState;
    return typeof s.email === 'string' && typeof s.password === 'string' ? s : null;
  } catch {
    return null;
  }
}

function saveState(file: string, state: StartState): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, file);
  fs.chmodSync(file, 0o600);
}

function client(baseUrl: string) {
  return async (method: string, urlPath: string, opts: { token?: string; body?: unknown } = {}): Promise<ApiResult> => {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(new URL(urlPath, baseUrl), {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body };
  };
}

type Api = ReturnType<typeof client>;

function expectStatus(what: string, res: ApiResult, ...ok: number[]): void {
  if (!ok.includes(res.status)) throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
}

/** The demo account (reused when start.json's password still signs in) and a personal access token. */
async function account(api: Api, previous: StartState | null): Promise<StartState> {
  if (previous) {
    const login = await api('POST', '/v1/auth/token', {
      body: { grant_type: 'password', email: previous.email, password: previous.password },
    });
    if (login.status === 200) {
      const state: StartState = { ...previous };
      if (!state.pat || (await api('GET', '/v1/account', { token: state.pat })).status !== 200) {
        const pat = await api('POST', '/v1/account/tokens', {
          token: login.body.access_token,
          body: { name: 'pnpm start' },
        });
        expectStatus('create personal access token', pat, 201);
        state.pat = pat.body.token;
      }
      return state;
    }
  }
  const password = randomBytes(12).toString('base64url');
  let email = previous?.email ?? DEMO_EMAIL;
  let reg = await api('POST', '/v1/auth/register', { body: { email, password, name: 'Demo' } });
  if (reg.status === 409) {
    // The cloud database has this account but start.json lost its password: use a fresh address.
    email = `demo+${randomBytes(4).toString('hex')}@example.com`;
    reg = await api('POST', '/v1/auth/register', { body: { email, password, name: 'Demo' } });
  }
  expectStatus('register the demo account', reg, 201);
  const pat = await api('POST', '/v1/account/tokens', { token: reg.body.access_token, body: { name: 'pnpm start' } });
  expectStatus('create personal access token', pat, 201);
  return { email, password, pat: pat.body.token };
}

/** The edge registered in the cloud: reused while it exists and is not revoked. */
async function edgeRegistration(api: Api, state: StartState): Promise<{ id: number; token: string }> {
  if (state.edge_id && state.edge_token) {
    const got = await api('GET', `/v1/edges/${state.edge_id}`, { token: state.pat });
    if (got.status === 200 && got.body.status !== 'revoked') return { id: state.edge_id, token: state.edge_token };
  }
  const created = await api('POST', '/v1/edges', { token: state.pat, body: { name: 'Home' } });
  expectStatus('create the edge', created, 201);
  return { id: created.body.edge.id, token: created.body.token };
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Adds the demo integration through the cloud's config flow, unless the edge already has it. */
async function addDemo(api: Api, pat: string, edgeId: number): Promise<'added' | 'present'> {
  const entries = await api('GET', `/v1/config_entries?edge_id=${edgeId}`, { token: pat });
  expectStatus('list config entries', entries, 200);
  if ((entries.body as { domain: string }[]).some((e) => e.domain === 'demo')) return 'present';
  const flow = await api('POST', '/v1/config_flow', { token: pat, body: { handler: 'demo', edge_id: edgeId } });
  expectStatus('start the demo config flow', flow, 200);
  if (flow.body.type === 'abort' && flow.body.reason === 'single_instance_allowed') return 'present';
  if (flow.body.type !== 'form') throw new Error(`demo config flow: unexpected ${JSON.stringify(flow.body)}`);
  const done = await api('POST', `/v1/config_flow/${encodeURIComponent(flow.body.flowId)}/advance`, {
    token: pat,
    body: { name: 'Demo Home', update_interval: 10 },
  });
  expectStatus('finish the demo config flow', done, 200);
  if (done.body.type !== 'create_entry') throw new Error(`demo config flow: unexpected ${JSON.stringify(done.body)}`);
  return 'added';
}

function portHint(err: unknown): string | null {
  if (err instanceof PortInUseError) {
    const flag = err.flag === '--port' ? '--edge-port' : err.flag;
    const who = err.port === 1883 ? ' (probably by Mosquitto)' : '';
    return `${err.what} port ${err.port} is already in use${who}; try ${flag} 0 (any free port) or another port`;
  }
  const e = err as NodeJS.ErrnoException;
  return e?.code === 'EADDRINUSE'
    ? 'cloud HTTP port is already in use; try --port 0 (any free port) or another port'
    : null;
}

async function main(): Promise<void> {
  const opts = parse();
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const stateFile = path.join(opts.dataDir, 'start.json');

  let cloud: Cloud | null = null;
  let edge: Edge | null = null;
  let sim: Simulator | null = null;
  /** Resolves true when every part stopped cleanly (the edge committed everything it holds). */
  let stopping: Promise<boolean> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      let clean = true;
      for (const [what, step] of [
        ['the simulator', () => sim?.stop()],
        ['the edge', () => edge?.stop()],
        ['the cloud', () => cloud?.stop()],
      ] as const) {
        try {
          await step();
        } catch (err) {
          clean = false;
          process.stderr.write(`error: stopping ${what} failed: ${(err as Error)?.message ?? String(err)}\n`);
        }
      }
      return clean;
    })();
    return stopping;
  };
  // The first SIGTERM/SIGINT stops everything; later ones (pnpm forwards one, a terminal's Ctrl-C
  // reaches the whole group) are ignored: the edge commits its pending writes before we exit.
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      process.stderr.write(`${signal} while stopping: ignored (pending writes are committed first)\n`);
      return;
    }
    signalled = true;
    process.stderr.write(`${signal}: stopping\n`);
    const force = setTimeout(() => {
      process.stderr.write('error: stop did not finish within 15 s\n');
      process.exit(1);
    }, 15_000);
    force.unref();
    void stop().then((clean) => process.exit(clean ? 0 : 1));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  try {
    // the portal's build (web/dist) is made here when missing or older than its sources (a few seconds, once)
    await ensurePortalBuilt();
    cloud = createCloud(defaultCloudConfig({ port: opts.port, dataDir: path.join(opts.dataDir, 'cloud') }));
    await cloud.start();
    const cloudUrl = `http://127.0.0.1:${cloud.port}`;
    const api = client(cloudUrl);

    const previous = loadState(stateFile);
    const state = await account(api, previous);
    saveState(stateFile, state);
    const reg = await edgeRegistration(api, state);
    const reused = previous?.edge_id === reg.id;
    state.edge_id = reg.id;
    state.edge_token = reg.token;
    saveState(stateFile, state);
    const pat = state.pat as string;

    edge = createEdge({
      port: opts.edgePort,
      mqttPort: opts.mqttPort,
      dataDir: path.join(opts.dataDir, 'edge'),
      cloudUrl,
      token: reg.token,
    });
    const ports = await edge.start();
    await until(
      'the edge to come online in the cloud',
      async () => (await api('GET', `/v1/edges/${reg.id}`, { token: pat })).body?.status === 'online',
    );
    const demo = await addDemo(api, pat, reg.id);

    if (opts.devices > 0) {
      // One MQTT user for the simulator, with a fresh password on every start.
      edge.deleteMqttUser(SIM_USER);
      const creds = await edge.createMqttCredentials({ username: SIM_USER, role: 'device' });
      sim = new Simulator({
        url: `mqtt://${encodeURIComponent(creds.username)}:${encodeURIComponent(creds.password)}@127.0.0.1:${ports.mqtt}`,
        devices: opts.devices,
        id: 'sim',
        intervalMs: 5000,
        log: (m) => process.stderr.write(`${new Date().toISOString()} sim ${m}\n`),
      });
      await sim.start();
    }

    const edgeUrl = `http://127.0.0.1:${ports.http}`;
    const out = [
      '',
      `smarthome is running (data in ${opts.dataDir}; ${reused ? 'reused from an earlier start' : 'created now'})`,
      '',
      `  portal         ${cloudUrl}/   (sign in with the account below)`,
      `  edge portal    ${edgeUrl}/   (works without the cloud; the first visit creates the home's local owner account)`,
      `  cloud API      ${cloudUrl}`,
      `  API docs       ${cloudUrl}/docs   (OpenAPI: ${cloudUrl}/openapi.json)`,
      `  app WebSocket  ${cloudUrl.replace('http', 'ws')}/v1/websocket`,
      `  edge local API ${edgeUrl}   (edge id ${reg.id}; local tokens: pnpm edge token create --data-dir ${path.join(opts.dataDir, 'edge')})`,
      `  MQTT broker    mqtt://127.0.0.1:${ports.mqtt}`,
      '',
      `  account        ${state.email} (password in ${stateFile})`,
      `  token          ${pat}`,
      '                 (a personal access token: it does not expire; revoke it with DELETE /v1/account/tokens/{id})',
      `  demo           ${demo === 'added' ? 'demo integration added' : 'demo integration already set up'}; ${sim ? `${sim.devices.length} simulated MQTT devices` : 'no simulator'}`,
      '',
      'try:',
      `  export TOKEN=${pat}`,
      `  curl -s -H "Authorization: Bearer $TOKEN" ${cloudUrl}/v1/edges`,
      `  curl -s -H "Authorization: Bearer $TOKEN" ${cloudUrl}/v1/entities/states`,
      `  curl -s -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"entity_id":"light.light_1","brightness":128}' ${cloudUrl}/v1/services/light/turn_on`,
      '',
    ];
    process.stdout.write(out.join('\n') + '\n');
    process.stdout.write(`ready ${JSON.stringify({ http: cloud.port, edge: ports.http, mqtt: ports.mqtt })}\n`);
  } catch (err) {
    const hint = portHint(err);
    process.stderr.write(`error: ${hint ?? (err as Error).message ?? String(err)}\n`);
    await stop();
    process.exit(1);
  }
}

void main();
