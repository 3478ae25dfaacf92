import { serveRoutes, type TestServer } from './server.ts';
import { ConfigFlowComponent, type ConfigFlowComponentDeps } from '../config-flow/component.ts';
import {
  InMemoryConfigEntryStore,
  InMemoryDeviceRegistry,
  InMemoryServicePlatforms,
  InMemoryStates,
} from '../config-flow/memory-ports.ts';
import { mountConfigFlowRoutes } from '../config-flow/routes.ts';
import type { Integration, StepResult } from '../config-flow/types.ts';

/** Test helpers (not a test file): a config-flow component on in-memory ports, its routes served on loopback. */

export interface ConfigFlowHarness<A> {
  server: TestServer;
  /** the running component (a new one after `restart`) */
  component: ConfigFlowComponent;
  store: InMemoryConfigEntryStore;
  registry: InMemoryDeviceRegistry;
  states: InMemoryStates;
  services: InMemoryServicePlatforms;
  /** the principal every request is made as (mutable: a test may switch users) */
  principal: A;
  /** builds and starts a new component on the same ports, as an edge restart does (the server keeps the old one) */
  restart(): Promise<ConfigFlowComponent>;
  close(): Promise<void>;
}

export interface ConfigFlowHarnessOptions<A> extends Pick<
  ConfigFlowComponentDeps,
  'flowTtlMs' | 'flowSweepIntervalMs' | 'now'
> {
  /** built anew for each component (the first and each restart), as an edge start builds them */
  integrations: () => Integration[];
  principal?: A;
  /** who owns a flow (mountConfigFlowRoutes' ownerOf) */
  ownerOf?: (principal: A) => string;
}

/** Starts a config-flow component with `integrations` on in-memory ports and serves its routes. */
export async function serveConfigFlows<A = object>(
  options: ConfigFlowHarnessOptions<A>,
): Promise<ConfigFlowHarness<A>> {
  const { principal = {} as A, ownerOf, integrations, ...rest } = options;
  const store = new InMemoryConfigEntryStore();
  const registry = new InMemoryDeviceRegistry();
  const states = new InMemoryStates();
  const services = new InMemoryServicePlatforms();
  const build = () =>
    new ConfigFlowComponent({
      entries: store,
      devices: registry,
      states,
      services,
      integrations: integrations(),
      ...rest,
    });
  const h: ConfigFlowHarness<A> = {
    server: undefined as unknown as TestServer,
    component: build(),
    store,
    registry,
    states,
    services,
    principal,
    async restart() {
      h.component = build();
      await h.component.start();
      return h.component;
    },
    async close() {
      await h.server.close();
      await h.component.stop();
    },
  };
  await h.component.start();
  const first = h.component;
  h.server = await serveRoutes(principal, (router) => mountConfigFlowRoutes(router, { component: first, ownerOf }));
  return h;
}

/** An integration whose one form step waits for an OAuth-style callback carrying `state` (never sent on the wire). */
export function callbackIntegration(state: string): Integration {
  return {
    domain: 'test_callback',
    name: 'Callback',
    createFlow: () => ({
      firstStep: 'auth',
      step: (_stepId, input): StepResult =>
        input
          ? { type: 'create_entry', title: `code ${String(input.code)}`, data: {} }
          : {
              type: 'form',
              stepId: 'auth',
              data_schema: [
                { name: 'code', type: 'string', required: true },
                { name: 'state', type: 'string' },
              ],
              callback_state: state,
            },
    }),
  };
}
