/**
 * In-memory implementations of the ports: used by the tests, and a reference for the
 * adapters over the edge core's registry and state machine.
 */
import type { Device, EntityRecord } from '@smarthome/protocol';
import type {
  ConfigEntryStore,
  DeviceInput,
  DeviceRegistryPort,
  EntityInput,
  EntityServicePlatform,
  NewConfigEntry,
  RemovedRegistryItems,
  ServicePlatformPort,
  StatePort,
  StoredConfigEntry,
} from './ports.ts';

const clone = <T>(v: T): T => structuredClone(v);

export class InMemoryConfigEntryStore implements ConfigEntryStore {
  private readonly entries = new Map<number, StoredConfigEntry>();
  private nextId = 1;

  create(input: NewConfigEntry): StoredConfigEntry {
    const entry: StoredConfigEntry = {
      id: this.nextId++,
      domain: input.domain,
      title: input.title,
      source: input.source,
      state: 'not_loaded',
      created_at: new Date().toISOString(),
      edge_id: null,
      data: clone(input.data),
    };
    this.entries.set(entry.id, entry);
    return clone(entry);
  }
  list(): StoredConfigEntry[] {
    return [...this.entries.values()].map(clone);
  }
  get(id: number): StoredConfigEntry | undefined {
    const e = this.entries.get(id);
    return e && clone(e);
  }
  update(id: number, patch: { state?: string; data?: Record<string, unknown>; title?: string }): void {
    const e = this.entries.get(id);
    if (!e) return;
    if (patch.state !== undefined) e.state = patch.state;
    if (patch.title !== undefined) e.title = patch.title;
    if (patch.data !== undefined) e.data = clone(patch.data);
  }
  remove(id: number): boolean {
    return this.entries.delete(id);
  }
}

export class InMemoryDeviceRegistry implements DeviceRegistryPort {
  readonly devices = new Map<number, Device>();
  readonly entities = new Map<string, EntityRecord>();
  private nextDevice = 1;
  private nextEntity = 1;

  upsertDevice(input: DeviceInput): Device {
    const key = input.identifiers[0];
    const existing = [...this.devices.values()].find(
      (d) => d.config_entry_id === input.config_entry_id && d.identifiers?.[0] === key,
    );
    const device: Device = {
      id: existing?.id ?? this.nextDevice++,
      name: input.name,
      manufacturer: input.manufacturer ?? null,
      model: input.model ?? null,
      sw_version: input.sw_version ?? null,
      identifiers: [...input.identifiers],
      config_entry_id: input.config_entry_id,
      user_id: null,
    };
    this.devices.set(device.id, device);
    return clone(device);
  }

  upsertEntity(input: EntityInput): EntityRecord {
    const existing = [...this.entities.values()].find(
      (e) => e.platform === input.platform && e.unique_id === input.unique_id,
    );
    let entityId = existing?.entity_id;
    if (!entityId) {
      const base = `${input.domain}.${input.suggested_object_id}`;
      entityId = base;
      for (let n = 2; this.entities.has(entityId); n++) entityId = `${base}_${n}`;
    }
    const record: EntityRecord = {
      id: existing?.id ?? this.nextEntity++,
      entity_id: entityId,
      name: input.name,
      domain: input.domain,
      platform: input.platform,
      unique_id: input.unique_id,
      config_entry_id: input.config_entry_id,
      device_registry_id: input.device_registry_id,
    };
    this.entities.set(entityId, record);
    return clone(record);
  }

  removeByConfigEntry(configEntryId: number): RemovedRegistryItems {
    const out: RemovedRegistryItems = { device_ids: [], entity_ids: [] };
    for (const [id, e] of this.entities) {
      if (e.config_entry_id === configEntryId) {
        this.entities.delete(id);
        out.entity_ids.push(id);
      }
    }
    for (const [id, d] of this.devices) {
      if (d.config_entry_id === configEntryId) {
        this.devices.delete(id);
        out.device_ids.push(id);
      }
    }
    return out;
  }
}

export interface RecordedState {
  state: string;
  attributes: Record<string, unknown>;
  changes: number;
}

export class InMemoryStates implements StatePort {
  readonly states = new Map<string, RecordedState>();

  set(entityId: string, state: string, attributes: Record<string, unknown> = {}): void {
    const prev = this.states.get(entityId);
    this.states.set(entityId, { state, attributes: clone(attributes), changes: (prev?.changes ?? 0) + 1 });
  }
  get(entityId: string): { state: string; attributes: Record<string, unknown> } | undefined {
    const s = this.states.get(entityId);
    return s ? { state: s.state, attributes: clone(s.attributes) } : undefined;
  }
  remove(entityId: string): void {
    this.states.delete(entityId);
  }
}

/** Service platforms by name; `call` dispatches like the core's ServiceRegistry (minus the registry checks). */
export class InMemoryServicePlatforms implements ServicePlatformPort {
  readonly platforms = new Map<string, EntityServicePlatform>();

  register(platform: EntityServicePlatform): () => void {
    this.platforms.set(platform.platform, platform);
    return () => {
      if (this.platforms.get(platform.platform) === platform) this.platforms.delete(platform.platform);
    };
  }

  async call(
    platformName: string,
    entityId: string,
    service: string,
    data: Record<string, unknown> = {},
  ): Promise<void> {
    const platform = this.platforms.get(platformName);
    const domain = entityId.split('.')[0];
    if (!platform || !platform.supportedServices(domain).includes(service))
      throw new Error(`service ${domain}.${service} is not supported`);
    await platform.callService(entityId, service, data);
  }
}
