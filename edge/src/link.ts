import os from 'node:os';
import { RegisterCloudResult, tunnel, type Device, type EntityRecord, type MqttCredentials } from '@smarthome/protocol';

type AutomationSummary = tunnel.Snapshot['automations'][number];
import type { EventBus } from './bus.ts';
import type { CloudTriggers } from './ha-api/cloud-triggers.ts';
import { callServiceEvent } from './bus-events.ts';
import type { EdgeFeatures } from './features.ts';
import type { Logger } from './log.ts';
import { TunnelClient } from './tunnel/client.ts';

export const EDGE_VERSION = '1.0.0';
const HEARTBEAT_MS = 20_000;
const MAX_RELAYED_BYTES = 4 * 1024 * 1024;

export interface EdgeLinkDeps {
  cloudUrl: string;
  /** edge token from POST /v1/edges; a cloud replica gets its own from register-cloud */
  token?: string;
  cloudReplica: boolean;
  fleetToken?: string;
  hostname?: string;
  log: Logger;
  bus: EventBus;
  features: EdgeFeatures;
  snapshot(): Omit<tunnel.Snapshot, 'automations'>;
  /** the device as the tunnel carries it (with its via_device_id) */
  deviceRecord(device: Device): Device;
  /** the registry record of an entity, if registered */
  entityRecord(entityId: string): EntityRecord | undefined;
  handleTrusted(request: Request, via?: string): Promise<Response>;
  /** the cloud's subscribe_trigger subscriptions: their events go out through the tunnel */
  triggers?: CloudTriggers;
  installMqttCredentials(creds: MqttCredentials): Promise<void>;
}

type AutomationLike = {
  id: string;
  edge_id: number | null;
  alias: string;
  enabled: boolean;
  mode: AutomationSummary['mode'];
  webhook_id: string | null;
};
const summary = (a: AutomationLike): AutomationSummary => ({
  id: a.id,
  edge_id: a.edge_id,
  alias: a.alias,
  enabled: a.enabled,
  mode: a.mode,
  webhook_id: a.webhook_id,
});

/**
 * The edge's link to a cloud: registers a cloud replica (FLEET_TOKEN) when asked, then keeps
 * the tunnel: the snapshot and every change as deltas, and the cloud's RPCs answered by the
 * local API (marked as coming from the cloud, never as local).
 */
export class EdgeLink {
  private readonly deps: EdgeLinkDeps;
  private client: TunnelClient | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private token: string | undefined;
  private stopEvents: (() => void) | null = null;

  constructor(deps: EdgeLinkDeps) {
    this.deps = deps;
    this.token = deps.token;
  }

  get edgeId(): number | null {
    return this.client?.edgeId ?? null;
  }

  get connected(): boolean {
    return this.client?.connected ?? false;
  }

  async start(): Promise<void> {
    if (this.deps.cloudReplica) await this.registerReplica();
    if (!this.token) throw new Error('no edge token: pass --token (or --cloud-replica with FLEET_TOKEN)');
    const { bus, features } = this.deps;
    this.client = new TunnelClient({
      cloudUrl: this.deps.cloudUrl,
      token: this.token,
      edgeVersion: EDGE_VERSION,
      hostname: this.deps.hostname ?? os.hostname(),
      log: this.deps.log,
      snapshot: () => ({ ...this.deps.snapshot(), automations: features.automations.list().map(summary) }),
      onDelta: (emit) => {
        const offs = [
          bus.on('state_changed', (e) => {
            if (e.new_state) return emit({ kind: 'state', state: e.new_state, old_state: e.old_state });
            // A disabled entity loses its state but stays registered: its record (disabled_by) tells the cloud.
            const record = this.deps.entityRecord(e.entity_id);
            emit(
              record?.disabled_by
                ? { kind: 'entity_upsert', entity: record }
                : { kind: 'entity_remove', entity_id: e.entity_id },
            );
          }),
          bus.on('device_upsert', (e) => emit({ kind: 'device_upsert', device: this.deps.deviceRecord(e.device) })),
          bus.on('device_remove', (e) => emit({ kind: 'device_remove', id: e.id })),
          bus.on('entity_upsert', (e) => emit({ kind: 'entity_upsert', entity: e.entity })),
          bus.on('entity_remove', (e) => emit({ kind: 'entity_remove', entity_id: e.entity_id })),
          bus.on('area_upsert', (e) => emit({ kind: 'area_upsert', area: e.area })),
          bus.on('config_entry_upsert', (e) => emit({ kind: 'config_entry_upsert', entry: e.entry })),
          bus.on('config_entry_remove', (e) => emit({ kind: 'config_entry_remove', id: e.id })),
          features.onAutomationChange((c) =>
            emit(
              c.kind === 'upsert'
                ? { kind: 'automation_upsert', automation: summary(c.automation) }
                : { kind: 'automation_remove', id: c.id },
            ),
          ),
        ];
        return () => {
          for (const off of offs) off();
        };
      },
      handleRequest: (req) => this.answer(req),
      // the cloud makes its trigger subscriptions again after each hello
      onDisconnect: () => this.deps.triggers?.clear(),
    });
    const sender = this.client;
    this.deps.triggers?.useSender((msg) => sender.sendTrigger(msg));
    this.client.start();
    // Bus events reach the cloud's app WebSocket subscribers (state_changed goes as deltas above).
    const client = this.client;
    const offs = [
      bus.on('event', (e) => client.sendEvent(e.event)),
      bus.on('call_service', (e) => client.sendEvent(callServiceEvent(e))),
    ];
    this.stopEvents = () => {
      for (const off of offs) off();
    };
    if (this.deps.cloudReplica) {
      this.heartbeat = setInterval(() => void this.beat(), HEARTBEAT_MS);
      this.heartbeat.unref();
    }
  }

  async stop(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.stopEvents?.();
    this.stopEvents = null;
    this.deps.triggers?.useSender(null);
    this.deps.triggers?.clear();
    await this.client?.stop();
    this.client = null;
  }

  /** register-cloud is idempotent by hostname: the same edge id on every start. */
  private async registerReplica(): Promise<void> {
    if (!this.deps.fleetToken) throw new Error('--cloud-replica needs FLEET_TOKEN in the environment');
    const res = await fetch(new URL('/v1/edge/register-cloud', this.deps.cloudUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${this.deps.fleetToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        hostname: this.deps.hostname ?? os.hostname(),
        name: `replica ${this.deps.hostname ?? os.hostname()}`,
        capabilities: { automations: true, mqtt: true },
      }),
      signal: AbortSignal.timeout(15_000),
    });
    if (!res.ok) throw new Error(`register-cloud failed: HTTP ${res.status}`);
    const reg = RegisterCloudResult.parse(await res.json());
    this.token = reg.token;
    // The credentials the cloud issued are the ones its MQTT clients will use on our broker.
    await this.deps.installMqttCredentials(reg.mqtt);
    this.deps.log.info(`registered as cloud replica edge ${reg.edge.id}`);
  }

  private async beat(): Promise<void> {
    try {
      await fetch(new URL('/v1/edge/heartbeat', this.deps.cloudUrl), {
        method: 'POST',
        headers: { authorization: `Bearer ${this.token}` },
        signal: AbortSignal.timeout(10_000),
      });
    } catch (err) {
      this.deps.log.warn('heartbeat failed', { err: (err as Error).message });
    }
  }

  /** An RPC from the cloud, answered by the local API as a trusted, cloud-originated call. */
  private async answer(
    req: tunnel.TunnelRequest,
  ): Promise<{ status: number; body: unknown; headers?: Record<string, string>; encoding?: 'base64' }> {
    const headers: Record<string, string> = { ...req.headers, 'x-smarthome-origin': 'cloud' };
    if (headers.range) headers.range = clampRange(headers.range);
    if (req.origin.remote_addr) headers['x-forwarded-for'] = req.origin.remote_addr;
    let body: string | undefined;
    if (req.body !== undefined && req.method !== 'GET') {
      body = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }
    const res = await this.deps.handleTrusted(
      new Request(new URL(req.path, 'http://edge.internal'), { method: req.method, headers, body }),
      'cloud',
    );
    const type = res.headers.get('content-type') ?? '';
    if (type.includes('json') || res.status === 204) {
      const text = await res.text();
      // A 429 keeps its Retry-After across the tunnel (the cloud passes it on).
      const retryAfter = res.headers.get('retry-after');
      return {
        status: res.status,
        body: text ? JSON.parse(text) : null,
        ...(retryAfter ? { headers: { 'retry-after': retryAfter } } : {}),
      };
    }
    const bytes = Buffer.from(await res.arrayBuffer());
    if (bytes.byteLength > MAX_RELAYED_BYTES) return { status: 502, body: { error: 'response_too_large' } };
    const relayed: Record<string, string> = {};
    for (const h of ['content-type', 'content-range', 'accept-ranges', 'content-length']) {
      const v = res.headers.get(h);
      if (v) relayed[h] = v;
    }
    return { status: res.status, body: bytes.toString('base64'), headers: relayed, encoding: 'base64' };
  }
}

/** Media crosses the tunnel in windows of at most MAX_RELAYED_BYTES; players ask for the rest. */
export function clampRange(range: string): string {
  const m = /^bytes=(\d+)-(\d*)$/.exec(range.trim());
  if (!m) return range;
  const start = Number(m[1]);
  const end = m[2] === '' ? Infinity : Number(m[2]);
  return `bytes=${start}-${Math.min(end, start + MAX_RELAYED_BYTES - 1)}`;
}
