/**
 * Config entries at runtime: sets up every stored entry on start (devices, timers), sets up
 * entries created by flows, and on removal unloads the entry and removes its devices,
 * entities and states.
 */
import { notFound } from '@smarthome/protocol/server';
import type { Logger } from '../log.ts';
import type {
  ConfigEntryStore,
  DeviceRegistryPort,
  NewConfigEntry,
  ServicePlatformPort,
  StatePort,
  StoredConfigEntry,
} from './ports.ts';
import type { EntryRuntime, Integration } from './types.ts';

export interface ConfigEntryManagerDeps {
  store: ConfigEntryStore;
  devices: DeviceRegistryPort;
  states: StatePort;
  services: ServicePlatformPort;
  integrations: ReadonlyMap<string, Integration>;
  log: Logger;
}

export class ConfigEntryManager {
  private readonly deps: ConfigEntryManagerDeps;
  private readonly runtimes = new Map<number, EntryRuntime>();
  private started = false;

  constructor(deps: ConfigEntryManagerDeps) {
    this.deps = deps;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const entry of await this.deps.store.list()) await this.setup(entry);
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    const ids = [...this.runtimes.keys()];
    for (const id of ids) await this.unload(id);
  }

  list(): Promise<StoredConfigEntry[]> {
    return Promise.resolve(this.deps.store.list());
  }

  async listByDomain(domain: string): Promise<StoredConfigEntry[]> {
    return (await this.list()).filter((e) => e.domain === domain);
  }

  /** Persists an entry created by a flow and sets it up (when the component runs). */
  async create(input: NewConfigEntry): Promise<StoredConfigEntry> {
    const entry = await this.deps.store.create(input);
    if (this.started) await this.setup(entry);
    return (await this.deps.store.get(entry.id)) ?? entry;
  }

  /** Unloads the entry, removes its devices, entities and states, then the entry itself. */
  async remove(id: number): Promise<void> {
    const entry = await this.deps.store.get(id);
    if (!entry) throw notFound('config entry not found');
    await this.unload(id);
    const removed = await this.deps.devices.removeByConfigEntry(id);
    for (const entityId of removed.entity_ids) await this.deps.states.remove(entityId);
    await this.deps.store.remove(id);
    this.deps.log.info(
      `config entry ${id} (${entry.domain}) removed with ${removed.device_ids.length} devices, ${removed.entity_ids.length} entities`,
    );
  }

  isLoaded(id: number): boolean {
    return this.runtimes.has(id);
  }

  private async setup(entry: StoredConfigEntry): Promise<void> {
    const integration = this.deps.integrations.get(entry.domain);
    // Entries of other owners (e.g. the core's own "system" entries) are left alone.
    if (!integration) {
      this.deps.log.debug(`config entry ${entry.id}: no integration ${entry.domain} here, not set up`);
      return;
    }
    try {
      const runtime = await integration.setupEntry?.(entry, {
        devices: this.deps.devices,
        states: this.deps.states,
        services: this.deps.services,
        log: this.deps.log,
        updateData: async (data) => {
          await this.deps.store.update(entry.id, { data });
        },
      });
      if (runtime) this.runtimes.set(entry.id, runtime);
      await this.deps.store.update(entry.id, { state: 'loaded' });
    } catch (err) {
      this.deps.log.error(`config entry ${entry.id} (${entry.domain}) setup failed`, err);
      await this.deps.store.update(entry.id, { state: 'setup_error' });
    }
  }

  private async unload(id: number): Promise<void> {
    const runtime = this.runtimes.get(id);
    this.runtimes.delete(id);
    if (!runtime) return;
    try {
      await runtime.unload();
    } catch (err) {
      this.deps.log.error(`config entry ${id} unload failed`, err);
    }
  }
}
