import mqtt, { type MqttClient } from 'mqtt';
import type { Publish, Rng, SimKind } from './kind-types.ts';
import { KINDS } from './kinds.ts';

export interface SimulatorOptions {
  /** mqtt://user:pass@host:port */
  url: string;
  devices: number;
  /** ms between spontaneous state changes (0 = none) */
  intervalMs?: number;
  /** discovery prefix */
  prefix?: string;
  /** distinguishes several simulators on one broker */
  id?: string;
  seed?: number;
  log?: (msg: string) => void;
}

export interface SimDevice {
  id: string;
  name: string;
  kind: SimKind;
  base: string;
  state: Record<string, unknown>;
  commandTopics: Set<string>;
}

/** A small deterministic PRNG (mulberry32) so runs can be reproduced. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * N simulated devices of mixed kinds on one MQTT connection: announces them with Home
 * Assistant discovery (retained), publishes their states, drifts sensors every interval,
 * answers commands with new states, and re-announces on the `<prefix>/status` birth message.
 * Lifecycle: start() connects and announces; stop() disconnects.
 */
export class Simulator {
  readonly options: Required<Omit<SimulatorOptions, 'log'>> & { log: (msg: string) => void };
  readonly devices: SimDevice[] = [];
  private client: MqttClient | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly random: Rng;
  private readonly byCommandTopic = new Map<string, SimDevice>();
  published = 0;
  commandsHandled = 0;

  constructor(options: SimulatorOptions) {
    this.options = {
      url: options.url,
      devices: options.devices,
      intervalMs: options.intervalMs ?? 5000,
      prefix: options.prefix ?? 'homeassistant',
      id: options.id ?? 'sim',
      seed: options.seed ?? 1,
      log: options.log ?? (() => {}),
    };
    this.random = rng(this.options.seed);
  }

  get availabilityTopic(): string {
    return `sim/${this.options.id}/status`;
  }

  async start(): Promise<void> {
    const { url, devices, prefix, id } = this.options;
    for (let i = 0; i < devices; i++) {
      const kind = KINDS[i % KINDS.length];
      const deviceId = `${id}-${kind.kind}-${i + 1}`;
      const device: SimDevice = {
        id: deviceId,
        name: `${titleCase(kind.kind)} ${i + 1}`,
        kind,
        base: `sim/${deviceId}`,
        state: kind.initial(this.random),
        commandTopics: new Set(),
      };
      for (const e of kind.entities(device.base)) {
        for (const [k, v] of Object.entries(e.config))
          if ((k.includes('cmd_t') || k === 'set_pos_t') && typeof v === 'string') device.commandTopics.add(v);
      }
      for (const t of device.commandTopics) this.byCommandTopic.set(t, device);
      this.devices.push(device);
    }
    const client = await mqtt.connectAsync(url, {
      clientId: `${id}-${process.pid}-${Math.floor(this.random() * 1e9)}`,
      will: { topic: this.availabilityTopic, payload: Buffer.from('offline'), qos: 1, retain: true },
      reconnectPeriod: 1000,
    });
    this.client = client;
    client.on('message', (topic, payload) => this.onMessage(topic, payload.toString()));
    client.on('error', (err) => this.options.log(`mqtt error: ${err.message}`));
    // exactly its own command topics (a device user may not listen to everything anyway)
    const topics = [...this.byCommandTopic.keys(), `${prefix}/status`];
    for (let i = 0; i < topics.length; i += 500) await client.subscribeAsync(topics.slice(i, i + 500), { qos: 1 });
    await this.announce();
    if (this.options.intervalMs > 0)
      this.timer = setInterval(() => {
        void this.tick();
      }, this.options.intervalMs);
    this.options.log(`simulating ${devices} devices on ${redact(url)}`);
  }

  /** Discovery configs (retained), availability and the full state of every device. */
  async announce(): Promise<void> {
    const { prefix } = this.options;
    const batch: Publish[] = [{ topic: this.availabilityTopic, payload: 'online', retain: true }];
    for (const d of this.devices) {
      for (const e of d.kind.entities(d.base)) {
        const config = {
          ...e.config,
          uniq_id: `${d.id}_${e.objectId}`,
          avty_t: this.availabilityTopic,
          dev: { ids: [d.id], name: d.name, mf: 'Smarthome Simulator', mdl: d.kind.model, sw: '1.0.0' },
          o: { name: 'smarthome-sim' },
        };
        batch.push({
          topic: `${prefix}/${e.component}/${d.id}/${e.objectId}/config`,
          payload: JSON.stringify(config),
          retain: true,
        });
      }
    }
    for (const d of this.devices) batch.push(...d.kind.states(d.base, d.state).map((p) => ({ ...p, retain: true })));
    await this.publishAll(batch);
  }

  /** One round of spontaneous changes. */
  async tick(): Promise<number> {
    const batch: Publish[] = [];
    for (const d of this.devices) batch.push(...d.kind.tick(d.base, d.state, this.random));
    await this.publishAll(batch);
    return batch.length;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    if (client) {
      // Only a connected client can say goodbye; while the broker is away a publish would wait
      // for it forever (its will already covers a dropped connection).
      if (client.connected)
        await bounded(client.publishAsync(this.availabilityTopic, 'offline', { qos: 1, retain: true }), 2000).catch(
          () => {},
        );
      await bounded(client.endAsync(!client.connected), 2000).catch(() => client.end(true));
    }
  }

  private onMessage(topic: string, payload: string): void {
    if (topic === `${this.options.prefix}/status`) {
      if (payload === 'online') void this.announce();
      return;
    }
    const device = this.byCommandTopic.get(topic);
    if (!device) return;
    this.commandsHandled++;
    const out = device.kind.command(device.base, device.state, topic, payload);
    void this.publishAll(out.map((p) => ({ ...p, retain: true })));
  }

  private async publishAll(batch: Publish[]): Promise<void> {
    const client = this.client;
    if (!client) return;
    await Promise.all(batch.map((p) => client.publishAsync(p.topic, p.payload, { qos: 1, retain: p.retain ?? false })));
    this.published += batch.length;
  }
}

function titleCase(kind: string): string {
  return kind
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(' ');
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

/** Rejects after `ms` when `promise` has not settled by then. */
function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
