/**
 * Demo integration: one config entry creates a small demo home (light, switch, sensors,
 * binary_sensor, cover) whose states change every `update_interval` seconds while the
 * entry is loaded. Removing the entry removes its devices and entities (done by the
 * config entry manager through the registry port).
 */
import type { DataSchemaField } from '@smarthome/protocol';
import type { ConfigFlow, EntryContext, EntryRuntime, FlowContext, Integration, StepResult } from '../../config-flow/types.ts';
import type { StoredConfigEntry } from '../../config-flow/ports.ts';
import { DEMO_DEVICES } from './devices.ts';

export { DEMO_DEVICES, type DemoDevice, type DemoEntity } from './devices.ts';

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

class DemoRuntime implements EntryRuntime {
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;
  private readonly ctx: EntryContext;
  private readonly entities: { entityId: string; at: (n: number) => { state: string; attributes: Record<string, unknown> }; name: string }[];
  constructor(ctx: EntryContext, entities: DemoRuntime['entities']) {
    this.ctx = ctx;
    this.entities = entities;
  }

  async publish(): Promise<void> {
    for (const e of this.entities) {
      const { state, attributes } = e.at(this.tick);
      await this.ctx.states.set(e.entityId, state, { friendly_name: e.name, ...attributes });
    }
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

export function createDemoIntegration(options: DemoIntegrationOptions = {}): Integration {
  return {
    domain: DEMO_DOMAIN,
    name: 'Demo',
    createFlow: (ctx) => new DemoFlow(ctx),
    async setupEntry(entry: StoredConfigEntry, ctx: EntryContext) {
      const entities: ConstructorParameters<typeof DemoRuntime>[1] = [];
      for (const d of DEMO_DEVICES) {
        const device = await ctx.devices.upsertDevice({
          config_entry_id: entry.id, name: d.name, manufacturer: 'Smarthome Demo', model: d.model,
          sw_version: '1.0', identifiers: [`demo:${entry.id}:${d.key}`],
        });
        for (const e of d.entities) {
          const record = await ctx.devices.upsertEntity({
            config_entry_id: entry.id, device_registry_id: device.id, platform: DEMO_DOMAIN, domain: e.domain,
            unique_id: `${entry.id}_${d.key}_${e.key}`, name: e.name, suggested_object_id: e.object_id,
          });
          entities.push({ entityId: record.entity_id, at: e.at, name: e.name });
        }
      }
      const runtime = new DemoRuntime(ctx, entities);
      await runtime.publish();
      const seconds = Number(entry.data.update_interval);
      runtime.run(options.intervalMs ?? (Number.isFinite(seconds) && seconds >= 1 ? seconds : 30) * 1000);
      return runtime;
    },
  };
}
