/**
 * Demo integration: one config entry creates a small demo home (light, switch, sensors,
 * binary_sensor, cover) whose states change every `update_interval` seconds while the
 * entry is loaded. Its light, switch and cover answer service calls like real devices
 * (service platform "demo"): the new state is published at once and the entity then stays
 * where it was put, while the script keeps driving the others.
 *
 * Flow: start → form "user" (name, update_interval: both optional) → advance (even `{}`)
 * → create_entry. Only one demo entry: a second start aborts with single_instance_allowed.
 * Removing the entry removes its devices and entities (done by the config entry manager
 * through the registry port).
 *
 * A restart changes nothing: states restored by the core are kept (not replaced by the
 * script's first values), and the entities put somewhere by a service call are listed in
 * the entry's data (`held`), so they stay there after a restart too.
 */
import type { DataSchemaField } from '@smarthome/protocol';
import type {
  ConfigFlow,
  EntryContext,
  EntryRuntime,
  FlowContext,
  Integration,
  StepResult,
} from '../../config-flow/types.ts';
import type { EntityServicePlatform, StoredConfigEntry } from '../../config-flow/ports.ts';
import { ServiceError } from '../../errors.ts';
import { DEMO_DEVICES } from './devices.ts';
import { applyDemoService, DEMO_SERVICES, type DemoState } from './services.ts';

export { DEMO_DEVICES, type DemoDevice, type DemoEntity } from './devices.ts';
export { applyDemoService, DEMO_SERVICES, type DemoState } from './services.ts';

export const DEMO_DOMAIN = 'demo';

export interface DemoIntegrationOptions {
  /** overrides the entry's update_interval (tests use a few milliseconds) */
  intervalMs?: number;
}

export const demoSchema: DataSchemaField[] = [
  { name: 'name', type: 'string', required: false, default: 'Demo Home' },
  { name: 'update_interval', type: 'integer', required: false, default: 30 },
];

class DemoFlow implements ConfigFlow {
  readonly firstStep = 'user';
  private readonly ctx: FlowContext;
  constructor(ctx: FlowContext) {
    this.ctx = ctx;
  }

  async step(stepId: string, input?: Record<string, unknown>): Promise<StepResult> {
    if (stepId !== 'user') return { type: 'abort', reason: 'unknown_step' };
    if ((await this.ctx.entries()).length > 0) return { type: 'abort', reason: 'single_instance_allowed' };
    if (!input) return { type: 'form', stepId: 'user', data_schema: demoSchema };
    const name = String(input.name);
    const interval = Number(input.update_interval);
    const errors: Record<string, string> = {};
    if (name.length === 0 || name.length > 100) errors.name = 'invalid_name';
    if (!Number.isInteger(interval) || interval < 1 || interval > 3600) errors.update_interval = 'invalid_interval';
    if (Object.keys(errors).length) return { type: 'form', stepId: 'user', data_schema: demoSchema, errors };
    return { type: 'create_entry', title: name, data: { update_interval: interval } };
  }
}

interface RuntimeEntity {
  /** stable key within the entry (`<device>_<entity>`), what `held` lists */
  key: string;
  entityId: string;
  domain: string;
  name: string;
  at: (n: number) => DemoState;
  /** last published state (without friendly_name) */
  current?: DemoState;
  /** set by a service call: the entity stays where it was put, the script no longer drives it */
  held: boolean;
}

class DemoRuntime implements EntryRuntime {
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;
  private readonly ctx: EntryContext;
  private readonly entities = new Map<string, RuntimeEntity>();
  private data: Record<string, unknown>;
  constructor(ctx: EntryContext, entities: Omit<RuntimeEntity, 'held'>[], data: Record<string, unknown>) {
    this.ctx = ctx;
    this.data = data;
    const held = new Set(heldKeys(data));
    for (const e of entities) this.entities.set(e.entityId, { ...e, held: held.has(e.key) });
  }

  /** Takes over the states the core restored; only entities without one get the script's first values. */
  async restore(): Promise<void> {
    for (const e of this.entities.values()) {
      const saved = await this.ctx.states.get(e.entityId);
      if (saved && saved.state !== null) {
        const { friendly_name: _name, ...attributes } = saved.attributes;
        e.current = { state: saved.state, attributes };
      } else {
        await this.show(e, e.at(this.tick));
      }
    }
  }

  owns(entityId: string): boolean {
    return this.entities.has(entityId);
  }

  private async show(e: RuntimeEntity, next: DemoState): Promise<void> {
    e.current = next;
    await this.ctx.states.set(e.entityId, next.state, { friendly_name: e.name, ...next.attributes });
  }

  /** Publishes the script's states at the current tick (entities put somewhere by a service call stay there). */
  async publish(): Promise<void> {
    for (const e of this.entities.values()) if (!e.held) await this.show(e, e.at(this.tick));
  }

  async callService(entityId: string, service: string, data: Record<string, unknown>): Promise<void> {
    const e = this.entities.get(entityId);
    if (!e) throw new ServiceError(`${entityId} is not a demo entity`);
    const next = applyDemoService(e.domain, service, e.current ?? e.at(this.tick), data);
    if (!e.held) {
      e.held = true;
      this.data = { ...this.data, held: [...this.entities.values()].filter((x) => x.held).map((x) => x.key) };
      await this.ctx.updateData(this.data);
    }
    await this.show(e, next);
  }

  run(intervalMs: number): void {
    this.timer = setInterval(() => {
      this.tick++;
      this.publish().catch((err) => this.ctx.log.error('demo: state update failed', err));
    }, intervalMs);
    this.timer.unref();
  }

  unload(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

function heldKeys(data: Record<string, unknown>): string[] {
  return Array.isArray(data.held) ? data.held.filter((k): k is string => typeof k === 'string') : [];
}

export function createDemoIntegration(options: DemoIntegrationOptions = {}): Integration {
  // One service platform ("demo") for the entities of every loaded demo entry.
  const runtimes = new Set<DemoRuntime>();
  let unregister: (() => void) | undefined;
  const platform: EntityServicePlatform = {
    platform: DEMO_DOMAIN,
    supportedServices: (domain) => [...(DEMO_SERVICES[domain] ?? [])],
    callService: (entityId, service, data) => {
      for (const r of runtimes) if (r.owns(entityId)) return r.callService(entityId, service, data);
      throw new ServiceError(`${entityId} is not a demo entity`);
    },
  };
  return {
    domain: DEMO_DOMAIN,
    name: 'Demo',
    createFlow: (ctx) => new DemoFlow(ctx),
    async setupEntry(entry: StoredConfigEntry, ctx: EntryContext) {
      const entities: ConstructorParameters<typeof DemoRuntime>[1] = [];
      for (const d of DEMO_DEVICES) {
        const device = await ctx.devices.upsertDevice({
          config_entry_id: entry.id,
          name: d.name,
          manufacturer: 'Smarthome Demo',
          model: d.model,
          sw_version: '1.0',
          identifiers: [`demo:${entry.id}:${d.key}`],
        });
        for (const e of d.entities) {
          const record = await ctx.devices.upsertEntity({
            config_entry_id: entry.id,
            device_registry_id: device.id,
            platform: DEMO_DOMAIN,
            domain: e.domain,
            unique_id: `${entry.id}_${d.key}_${e.key}`,
            name: e.name,
            suggested_object_id: e.object_id,
          });
          entities.push({
            key: `${d.key}_${e.key}`,
            entityId: record.entity_id,
            domain: e.domain,
            at: e.at,
            name: e.name,
          });
        }
      }
      const runtime = new DemoRuntime(ctx, entities, entry.data);
      await runtime.restore();
      const seconds = Number(entry.data.update_interval);
      runtime.run(options.intervalMs ?? (Number.isFinite(seconds) && seconds >= 1 ? seconds : 30) * 1000);
      runtimes.add(runtime);
      unregister ??= ctx.services.register(platform);
      return {
        unload: () => {
          runtime.unload();
          runtimes.delete(runtime);
          if (runtimes.size === 0) {
            unregister?.();
            unregister = undefined;
          }
        },
      };
    },
  };
}
