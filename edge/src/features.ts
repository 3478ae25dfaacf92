import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { SpecRouter } from '@smarthome/protocol/server';
import type { Automation } from '@smarthome/protocol';
import type { EventBus } from './bus.ts';
import type { EdgeDatabase } from './db/database.ts';
import type { Logger } from './log.ts';
import type { MqttBroker } from './mqtt/broker.ts';
import type { Registry } from './registry/registry.ts';
import type { ServiceRegistry } from './services/services.ts';
import type { StateMachine } from './states/state-machine.ts';
import {
  ConfigFlowComponent,
  mountConfigFlowRoutes,
  type ConfigEntryStore,
  type DeviceRegistryPort,
  type ServicePlatformPort,
  type StatePort,
} from './config-flow/index.ts';
import type { Integration } from './config-flow/types.ts';
import { createDemoIntegration } from './integrations/demo/index.ts';
import { createMqttIntegration } from './integrations/mqtt/index.ts';
import { createOAuthDemoCloudIntegration } from './integrations/oauth_demo_cloud/index.ts';
import { DemoMediaProvider, LocalMediaProvider, MediaSourceComponent, mountMediaRoutes } from './media/index.ts';
import { AutomationEngine, mountAutomationRoutes } from './automation/index.ts';
import { topicMatches } from './automation/triggers.ts';
import { haEventBus } from './bus-events.ts';

export interface FeatureCore {
  dataDir: string;
  cloudReplica: boolean;
  /** --call-url-allow: opts non-public targets back in on a cloud replica */
  callUrlAllow: string[];
  log: Logger;
  bus: EventBus;
  database: EdgeDatabase;
  registry: Registry;
  states: StateMachine;
  services: ServiceRegistry;
  broker: MqttBroker;
  /** the OAuth demo integration's provider (env EDGE_OAUTH_*); absent: not offered */
  oauth?: { clientId: string; clientSecret: string; authorizeUrl: string; tokenUrl: string; redirectUri: string };
  /** integrations offered besides the built-in ones (tests add their own) */
  extraIntegrations?: Integration[];
}

/** A key kept in the data dir, created once (0600). */
function persistentKey(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch {
    const key = randomBytes(32);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      fs.writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
    } catch {
      return fs.readFileSync(file);
    }
    return key;
  }
}

/**
 * Config flows and integrations, the media source and the automation engine, wired to the
 * edge core through their ports. Constructed by createEdge; started after the core.
 */
export class EdgeFeatures {
  readonly configFlows: ConfigFlowComponent;
  readonly media: MediaSourceComponent;
  readonly automations: AutomationEngine;
  private readonly changeListeners = new Set<
    (change: { kind: 'upsert'; automation: Automation } | { kind: 'remove'; id: string }) => void
  >();

  constructor(core: FeatureCore) {
    const { registry, states, log } = core;
    const entries: ConfigEntryStore = {
      create: (input) => {
        const entry = registry.addConfigEntry({ ...input, state: 'not_loaded' });
        return registry.getConfigEntry(entry.id)!;
      },
      list: () => registry.listConfigEntries().map((e) => registry.getConfigEntry(e.id)!),
      get: (id) => registry.getConfigEntry(id),
      update: (id, patch) => {
        registry.updateConfigEntry(id, patch);
      },
      remove: (id) => registry.removeConfigEntry(id),
    };
    const devices: DeviceRegistryPort = {
      upsertDevice: (input) => registry.upsertDevice(input),
      upsertEntity: (input) => registry.upsertEntity(input),
      removeByConfigEntry: (entryId) => {
        const entityIds = registry
          .listEntities()
          .filter((e) => e.config_entry_id === entryId)
          .map((e) => e.entity_id);
        const deviceIds = registry
          .listDevices()
          .filter((d) => d.config_entry_id === entryId)
          .map((d) => d.id);
        for (const id of entityIds) registry.removeEntity(id);
        for (const id of deviceIds) registry.removeDevice(id);
        return { device_ids: deviceIds, entity_ids: entityIds };
      },
    };
    const statePort: StatePort = {
      get: (entityId) => states.raw(entityId),
      set: (entityId, state, attributes = {}) => {
        states.set(entityId, state, attributes);
      },
      remove: (entityId) => {
        states.remove(entityId);
      },
    };
    const servicePlatforms: ServicePlatformPort = {
      register: (p) =>
        core.services.registerPlatform({
          platform: p.platform,
          supportedServices: (domain) => p.supportedServices(domain),
          callService: async (entityId, service, data) => {
            await p.callService(entityId, service, data);
          },
        }),
    };
    const integrations = [createMqttIntegration(), createDemoIntegration()];
    if (core.oauth) integrations.push(createOAuthDemoCloudIntegration(core.oauth));
    integrations.push(...(core.extraIntegrations ?? []));
    this.configFlows = new ConfigFlowComponent({
      entries,
      devices,
      states: statePort,
      services: servicePlatforms,
      integrations,
      log,
    });

    this.media = new MediaSourceComponent({
      providers: [new LocalMediaProvider({ folder: path.join(core.dataDir, 'media') }), new DemoMediaProvider()],
      signingKey: persistentKey(path.join(core.dataDir, 'media-signing.key')),
      log,
    });

    this.automations = new AutomationEngine({
      sqlite: () => core.database.sqlite,
      states: {
        get: (id) => states.get(id),
        all: () => states.all(),
        onStateChanged: (listener) => core.bus.on('state_changed', listener),
      },
      services: {
        call: async (domain, service, data, cause) => {
          const { entity_id: target, ...rest } = data;
          const ids = target === undefined ? [] : Array.isArray(target) ? target.map(String) : [String(target)];
          return core.services.call({ domain, service, entity_ids: ids, data: rest, cause });
        },
      },
      events: haEventBus(core.bus),
      mqtt: {
        subscribe: (filter, listener) =>
          core.broker.onMessage((topic, payload) => {
            if (topicMatches(filter, topic)) listener(topic, payload.toString('utf8'));
          }),
        publish: (topic, payload, options) => core.broker.publish(topic, payload, options),
      },
      // A home edge may call LAN targets; a cloud replica only public addresses, and allow-listed ones.
      callUrl: { policy: core.cloudReplica ? 'public-only' : 'lan-allowed', allowList: core.callUrlAllow },
      log,
      onChange: (change) => {
        for (const l of this.changeListeners) l(change);
      },
    });
  }

  onAutomationChange(
    listener: (change: { kind: 'upsert'; automation: Automation } | { kind: 'remove'; id: string }) => void,
  ): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  mount(router: SpecRouter<any>): void {
    mountConfigFlowRoutes(router, { component: this.configFlows });
    mountMediaRoutes(router, { component: this.media });
    mountAutomationRoutes(router, { engine: this.automations });
  }

  async start(): Promise<void> {
    await this.configFlows.start();
    await this.media.start();
    this.automations.start();
  }

  async stop(): Promise<void> {
    await this.automations.stop();
    await this.media.stop();
    await this.configFlows.stop();
  }
}
