/**
 * The config-flow component: integrations, running flows and config entries.
 * constructor assigns only; start() sets up stored entries and starts the flow sweeper;
 * stop() unloads entries (stopping their timers) and clears the sweeper.
 */
import { silentLogger, type Logger } from '../log.ts';
import { ConfigEntryManager } from './entries.ts';
import { FlowManager } from './flows.ts';
import type { ConfigEntryStore, DeviceRegistryPort, ServicePlatformPort, StatePort } from './ports.ts';
import type { Integration } from './types.ts';

export interface ConfigFlowComponentDeps {
  entries: ConfigEntryStore;
  devices: DeviceRegistryPort;
  states: StatePort;
  /** where integrations register service platforms; absent: their entities answer no services */
  services?: ServicePlatformPort;
  integrations: Integration[];
  log?: Logger;
  /** abandoned flows are forgotten after this (default 10 minutes) */
  flowTtlMs?: number;
  flowSweepIntervalMs?: number;
  maxFlows?: number;
  now?: () => number;
}

export class ConfigFlowComponent {
  readonly flows: FlowManager;
  readonly entries: ConfigEntryManager;

  constructor(deps: ConfigFlowComponentDeps) {
    const log = deps.log ?? silentLogger;
    const integrations = new Map<string, Integration>();
    for (const i of deps.integrations) {
      if (integrations.has(i.domain)) throw new Error(`integration ${i.domain} registered twice`);
      integrations.set(i.domain, i);
    }
    const services: ServicePlatformPort = deps.services ?? { register: () => () => {} };
    this.entries = new ConfigEntryManager({
      store: deps.entries,
      devices: deps.devices,
      states: deps.states,
      services,
      integrations,
      log,
    });
    this.flows = new FlowManager({
      integrations,
      entries: this.entries,
      log,
      ttlMs: deps.flowTtlMs,
      sweepIntervalMs: deps.flowSweepIntervalMs,
      maxFlows: deps.maxFlows,
      now: deps.now,
    });
  }

  async start(): Promise<void> {
    await this.entries.start();
    this.flows.start();
  }

  async stop(): Promise<void> {
    this.flows.stop();
    await this.entries.stop();
  }
}
