import type { EntityState, MqttCredentials, tunnel } from '@smarthome/protocol';
import type {
  CreateMqttCredentialsBody,
  MqttOwnership,
  MqttUser,
  SetMqttOwnerBody,
} from '@smarthome/protocol/edge-local';
import type { Hono } from 'hono';
import type { Integration } from './config-flow/types.ts';
import type { LocalTokenStore } from './auth/tokens.ts';
import type { EventBus } from './bus.ts';
import type { EdgeDatabase } from './db/database.ts';
import type { MqttDiscovery } from './discovery/discovery.ts';
import type { Logger, LogLevel } from './log.ts';
import type { MqttBroker } from './mqtt/broker.ts';
import type { Registry } from './registry/registry.ts';
import type { ServiceRegistry } from './services/services.ts';
import type { StateMachine } from './states/state-machine.ts';
import type { Recorder } from './recorder/recorder.ts';
import type { TemplateEngine } from './templates/template.ts';
import type { EdgeFeatures } from './features.ts';
import type { EdgeLink } from './link.ts';
import type { CloudTriggers } from './ha-api/cloud-triggers.ts';

/** The edge's configuration and its public surface (built by createEdge in edge.ts). */
export interface EdgeConfig {
  /** HTTP port of the local API (0 = any free port) */
  port: number;
  /** MQTT broker port (0 = any free port) */
  mqttPort: number;
  dataDir: string;
  /** bind address; default: all interfaces */
  host?: string;
  /** pairing with a cloud (used by the tunnel, later) */
  cloudUrl?: string;
  token?: string;
  cloudReplica?: boolean;
  /** targets a cloud replica's call_url may reach although not public (IPs, CIDRs, host names) */
  callUrlAllow?: string[];
  discoveryPrefix?: string;
  logLevel?: LogLevel;
  logger?: Logger;
  /** write-behind of states: longest delay (ms, default 250) and batch size */
  stateFlushMs?: number;
  stateBatch?: number;
  /** write-behind of retained MQTT messages: longest delay (ms, default 1000) */
  retainedFlushMs?: number;
  /** recorder retention in days (default 10); 0 turns the recorder off */
  historyDays?: number;
  /** the OAuth demo integration's provider; default: from EDGE_OAUTH_* (tests pass one in-process) */
  oauth?: { clientId: string; clientSecret: string; authorizeUrl: string; tokenUrl: string; redirectUri: string };
  /** integrations offered besides the built-in ones (tests pass their own) */
  extraIntegrations?: Integration[];
}

export interface EdgePorts {
  http: number;
  mqtt: number;
}

/** What a tunnel sends on connect (the automation summaries are added by the link). */
export type EdgeSnapshot = Omit<tunnel.Snapshot, 'automations'>;

export interface Edge {
  readonly config: EdgeConfig;
  readonly log: Logger;
  /** state_changed, device/entity/config-entry upserts and removals, call_service */
  readonly bus: EventBus;
  readonly registry: Registry;
  readonly states: StateMachine;
  /** state history and logbook (null with historyDays 0) */
  readonly recorder: Recorder | null;
  readonly services: ServiceRegistry;
  readonly templates: TemplateEngine;
  /** config flows, media source, automation engine */
  readonly features: EdgeFeatures;
  /** the tunnel to the cloud, when paired (--cloud-url/--token or --cloud-replica) */
  readonly link: EdgeLink | null;
  /** the cloud's subscribe_trigger subscriptions armed here */
  readonly cloudTriggers: CloudTriggers;
  readonly broker: MqttBroker;
  readonly discovery: MqttDiscovery;
  readonly tokens: LocalTokenStore;
  readonly database: EdgeDatabase;
  /** the local API as a Hono app (fetch without a network) */
  readonly app: Hono;
  /** bound ports after start() */
  readonly ports: EdgePorts;
  start(): Promise<EdgePorts>;
  /**
   * Commits what was acknowledged, stops taking input, commits again, lets network peers go
   * (each bounded), closes the database. Rejects with UncommittedWritesError when pending
   * writes could not be committed (the edge is stopped all the same).
   */
  stop(): Promise<void>;
  /** Writes every pending write-behind row (states, retained messages) now; throws when the database refuses. */
  commit(): void;
  callService(
    domain: string,
    service: string,
    entityIds: string | string[],
    data?: Record<string, unknown>,
  ): Promise<EntityState[]>;
  createMqttCredentials(input?: CreateMqttCredentialsBody): Promise<MqttCredentials>;
  listMqttUsers(): MqttUser[];
  deleteMqttUser(username: string): boolean;
  /** Gives the discovery configs of a device, or one config, to an MQTT user (null releases them). */
  setMqttOwner(input: SetMqttOwnerBody): MqttOwnership[];
  snapshot(): EdgeSnapshot;
  /** A local API request on behalf of a trusted caller (the cloud tunnel): no bearer token needed. */
  handleTrusted(request: Request, via?: string): Promise<Response>;
}
