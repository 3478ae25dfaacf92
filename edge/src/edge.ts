import { randomUUID } from 'node:crypto';
import type { Edge, EdgeConfig, EdgePorts } from './edge-types.ts';
import type { Device } from '@smarthome/protocol';
import type { CreateMqttCredentialsBody, SetMqttOwnerBody } from '@smarthome/protocol/edge-local';
import { createApiApp, type TrustedEnv } from './api/app.ts';
import { HttpServer } from './api/server.ts';
import { LocalTokenStore } from './auth/tokens.ts';
import { EventBus } from './bus.ts';
import { EdgeDatabase } from './db/database.ts';
import { declaredCommandTopics } from './discovery/config.ts';
import { MqttDiscovery } from './discovery/discovery.ts';
import { createLogger } from './log.ts';
import { MqttAcl } from './mqtt/acl.ts';
import { RetainedStore } from './mqtt/retained-store.ts';
import { MqttBroker } from './mqtt/broker.ts';
import { MqttUserStore } from './mqtt/users.ts';
import { Registry, toRecord } from './registry/registry.ts';
import { ServiceRegistry } from './services/services.ts';
import { StateMachine } from './states/state-machine.ts';
import { Recorder } from './recorder/recorder.ts';
import { TemplateEngine } from './templates/template.ts';
import { EdgeFeatures } from './features.ts';
import { EdgeLink } from './link.ts';
import { InvalidInputError, NotFoundError, UncommittedWritesError } from './errors.ts';
import { EdgeHaBackend } from './ha-api/backend.ts';
import { HaWebSocketServer } from './ha-api/socket.ts';
import { HaScripts } from './ha-api/scripts.ts';
import { mountHaRelay } from './ha-api/relay-route.ts';
import { CloudTriggers } from './ha-api/cloud-triggers.ts';
import { mountHaRest } from '@smarthome/protocol/server/ha/index';
import { LocalAccountStore } from './accounts/store.ts';
import { mountLocalAccountRoutes } from './accounts/routes.ts';
import { DashboardStore } from './dashboards/store.ts';
import { mountDashboardRoutes } from './dashboards/routes.ts';
import { portalFallback } from '@smarthome/web/serve';
import { Lifecycle } from '@smarthome/protocol/server';

export type { Edge, EdgeConfig, EdgePorts, EdgeSnapshot } from './edge-types.ts';

/**
 * Wires every edge component in one place. Constructors only assign; start() opens the
 * database, restores registry and states, starts the broker (with discovery listening),
 * then HTTP and the tunnel, registering each step's undo in one Lifecycle. stop() commits first
 * and never makes a commit wait behind a network peer (see start()).
 */
export function createEdge(config: EdgeConfig): Edge {
  const log = config.logger ?? createLogger(config.logLevel ?? 'info');
  const bus = new EventBus((err) => log.error('event listener failed', err));
  const database = new EdgeDatabase(config.dataDir);
  const registry = new Registry(database, bus);
  // A refused write-behind is kept and retried, but never silently: until it succeeds, a crash loses it.
  const writeFailed = (what: string) => (err: unknown) =>
    log.warn(
      `${what} could not be written (kept and retried; a crash until then loses them): ${(err as Error)?.message ?? String(err)}`,
    );
  const states = new StateMachine(database, registry, bus, {
    flushDelayMs: config.stateFlushMs,
    maxBatch: config.stateBatch,
    onWriteError: writeFailed('states'),
  });
  const historyDays = config.historyDays ?? 10;
  const recorder =
    historyDays > 0
      ? new Recorder(
          { database, bus, log },
          { historyDays, flushDelayMs: config.stateFlushMs, maxBatch: config.stateBatch },
        )
      : null;
  // one Jinja engine reading the state machine, for discovery and the HA APIs (AutomationTemplates also takes it;
  // the automation engine still makes its own with its clock, see automation/engine.ts)
  const templates = new TemplateEngine({}, { states });
  const tokens = new LocalTokenStore(database);
  const users = new MqttUserStore(database);
  const prefix = config.discoveryPrefix ?? 'homeassistant';
  const acl = new MqttAcl(prefix);
  const retained = new RetainedStore(database, config.retainedFlushMs, writeFailed('retained MQTT messages'));
  const broker = new MqttBroker({
    port: config.mqttPort,
    host: config.host,
    users,
    acl,
    log,
    retained,
    declaredCommandTopics: (topic, payload) => declaredCommandTopics(prefix, topic, payload),
  });
  const discovery = new MqttDiscovery({ broker, registry, states, acl, templates, log, prefix, bus });
  const services = new ServiceRegistry(registry, states, bus);
  services.registerPlatform(discovery);

  const createMqttCredentials = (input: CreateMqttCredentialsBody = {}) =>
    users.create({ username: input.username, role: input.role ?? 'device' });
  const listMqttUsers = () => users.list();
  const deleteMqttUser = (username: string) => {
    const removed = users.remove(username);
    if (removed) {
      broker.disconnectUser(username);
      // what it owned is free again: the next user publishing a config claims it
      const released = discovery.releaseOwner(username);
      if (released > 0) log.info(`mqtt: released ${released} discovery config(s) owned by deleted user ${username}`);
    }
    return removed;
  };
  const setMqttOwner = (input: SetMqttOwnerBody) => {
    if (input.username !== null && !users.get(input.username))
      throw new InvalidInputError(`MQTT user ${input.username} not found`);
    const target =
      input.device_id !== undefined ? { device_id: input.device_id } : { discovery_topic: input.discovery_topic ?? '' };
    const changed = discovery.setOwner(target, input.username);
    if (!changed) {
      throw new NotFoundError(
        'device_id' in target
          ? `device ${target.device_id} has no MQTT discovery configs`
          : `no discovery config on ${target.discovery_topic}`,
      );
    }
    log.info(
      `mqtt: ${changed.map((o) => o.discovery_topic).join(', ')} ${input.username === null ? 'released' : `now owned by ${input.username}`}`,
    );
    return changed;
  };
  const features = new EdgeFeatures({
    dataDir: config.dataDir,
    cloudReplica: config.cloudReplica ?? false,
    callUrlAllow: config.callUrlAllow ?? [],
    log,
    bus,
    database,
    registry,
    states,
    services,
    broker,
    oauth: config.oauth ?? oauthFromEnv(process.env),
    extraIntegrations: config.extraIntegrations,
  });
  const haScripts = new HaScripts({ states, services, bus, broker, log });
  const cloudTriggers = new CloudTriggers({ scripts: haScripts });
  const haBackend = new EdgeHaBackend({
    tokens,
    registry,
    states,
    services,
    bus,
    recorder,
    templates,
    scripts: haScripts,
  });
  const accounts = new LocalAccountStore(database, tokens);
  const app = createApiApp({
    registry,
    states,
    services,
    tokens,
    log,
    createMqttCredentials,
    listMqttUsers,
    deleteMqttUser,
    listMqttOwnership: () => discovery.ownership(),
    setMqttOwner,
    mountMore: (router) => {
      features.mount(router);
      mountLocalAccountRoutes(router, accounts);
      mountDashboardRoutes(router, new DashboardStore(database));
      mountHaRelay(router, haBackend, cloudTriggers);
    },
    commit: () => commit(),
    mountOwnAuth: (api) => mountHaRest(api, haBackend),
    // events fired through the API (the cloud's HA fire_event): automations and the tunnel see them
    fireEvent: (eventType, data) =>
      bus.emit('event', {
        event: {
          event_type: eventType,
          data,
          origin: 'REMOTE',
          time_fired: new Date().toISOString(),
          context: { id: randomUUID(), parent_id: null, user_id: null },
        },
        chain: 0,
      }),
  });
  // the portal (web/dist, or the executable's copy) at / with its local accounts: works with the cloud unreachable
  app.use('*', portalFallback('edge'));
  const http = new HttpServer(app, config.port, config.host, log);
  const haSocket = new HaWebSocketServer({ backend: haBackend, log });

  const ports: EdgePorts = { http: 0, mqtt: 0 };
  /** a device for the tunnel: with its parent and area when it has them (absent otherwise, as old edges send) */
  const deviceRecord = (d: Device): Device => {
    const { via_device_id: via, area_id: area } = registry.deviceLinks(d.id);
    return { ...d, ...(via === null ? {} : { via_device_id: via }), ...(area === null ? {} : { area_id: area }) };
  };
  const snapshot = () => ({
    devices: registry.listDevices().map(deviceRecord),
    entities: registry.listEntities(),
    states: states.all(),
    config_entries: registry.listConfigEntries(),
    areas: registry.areas.list(),
  });
  const handleTrusted = async (request: Request, via = 'cloud') => {
    const env: TrustedEnv = { trusted: { via } };
    return app.fetch(request, env);
  };
  const link =
    config.cloudUrl && (config.token || config.cloudReplica)
      ? new EdgeLink({
          cloudUrl: config.cloudUrl,
          token: config.token,
          cloudReplica: config.cloudReplica ?? false,
          fleetToken: process.env.FLEET_TOKEN,
          log,
          bus,
          features,
          snapshot,
          deviceRecord,
          entityRecord: (entityId) => {
            const entity = registry.getEntity(entityId);
            return entity && toRecord(entity);
          },
          handleTrusted,
          triggers: cloudTriggers,
          installMqttCredentials: (creds) => users.put({ ...creds, role: 'integration' }),
        })
      : null;
  /** What start() brought up, undone in reverse by stop() (also after a failed start). */
  const life = new Lifecycle({ onError: (message, err) => log.error(message, err) });

  /** Every write-behind row to disk now; the first failure is thrown after both were tried. */
  const commit = () => {
    let failure: unknown = null;
    for (const flush of [() => states.flush(), () => retained.flush()]) {
      try {
        flush();
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== null) throw failure;
  };
  const tryCommit = (when: string) => {
    try {
      commit();
    } catch (err) {
      log.warn(
        `stop: commit ${when} failed (tried again before the database closes): ${(err as Error)?.message ?? String(err)}`,
      );
    }
  };
  /** Runs a stop step; its failure is logged, never thrown (the next steps still run). */
  const settle = async (what: string, step: () => Promise<void> | void) => {
    try {
      await step();
    } catch (err) {
      log.error(`stop: ${what} failed`, err);
    }
  };

  /** The last step of a stop: every pending write, then the database closes. A write that still fails is reported, not swallowed. */
  const closeDatabase = () => {
    let failure: unknown = null;
    for (const last of [() => states.stop(), () => retained.stop()]) {
      try {
        last();
      } catch (err) {
        failure ??= err;
      }
    }
    const unwritten = { states: states.pendingWrites, retained: retained.pending };
    database.close();
    if (failure !== null) throw new UncommittedWritesError(unwritten.states, unwritten.retained, failure);
  };

  return {
    config,
    log,
    bus,
    registry,
    states,
    recorder,
    services,
    templates,
    broker,
    discovery,
    tokens,
    database,
    app,
    ports,
    features,
    link,
    cloudTriggers,

    /**
     * Each step registers its undo once it is up, so that stop() runs, in this order: 1. commit
     * what was acknowledged until now, before anything else; 2. take no more input: HTTP stops
     * accepting (in-flight requests get up to 1 s), the tunnel closes (up to 1 s), the broker
     * disconnects every client; 3. commit what came in meanwhile (last publishes, wills) without
     * waiting for those network peers; 4. let them go; 5. stop the features; 6. commit the rest
     * and close the database.
     */
    async start() {
      await life.start(async () => {
        database.open();
        life.defer('closing the database', closeDatabase);
        registry.load();
        states.start();
        if (recorder) {
          recorder.start();
          // history is written behind like states; its last rows go before the database closes
          life.defer('stopping the recorder', () => settle('stopping the recorder', () => recorder.stop()));
        }
        discovery.start();
        life.defer('stopping discovery', () => discovery.stop());
        await features.start();
        life.defer('stopping features', () =>
          settle('stopping automations, config flows and media', () => features.stop()),
        );
        life.join('network peers gone');
        ports.mqtt = await broker.start();
        life.defer('closing the MQTT broker', async () => {
          await settle('closing the MQTT broker', () => broker.stop());
          tryCommit('after the inputs closed');
        });
        await discovery.announce();
        ports.http = await http.start();
        life.deferInBackground('closing HTTP', () => settle('closing HTTP', () => http.stop()));
        if (link) life.deferInBackground('closing the tunnel', () => settle('closing the tunnel', () => link.stop()));
        haSocket.start(http.upgrades);
        life.defer('closing HA WebSockets', () => {
          haSocket.stop();
          cloudTriggers.clear();
          haScripts.stop();
        });
        life.defer('commit at the start of stop', () => tryCommit('at the start of stop'));
        await link?.start();
      });
      log.info(`edge ready: http ${ports.http}, mqtt ${ports.mqtt}, data ${database.file}`);
      return { ...ports };
    },

    stop() {
      return life.stop();
    },

    commit,

    callService(domain, service, entityIds, data = {}) {
      return services.call({ domain, service, entity_ids: Array.isArray(entityIds) ? entityIds : [entityIds], data });
    },
    createMqttCredentials,
    listMqttUsers,
    deleteMqttUser,
    setMqttOwner,

    snapshot,
    handleTrusted,
  };
}

/** The OAuth demo integration is offered when its provider is configured (EDGE_OAUTH_*). */
function oauthFromEnv(env: NodeJS.ProcessEnv) {
  const {
    EDGE_OAUTH_CLIENT_ID: clientId,
    EDGE_OAUTH_CLIENT_SECRET: clientSecret,
    EDGE_OAUTH_AUTHORIZE_URL: authorizeUrl,
    EDGE_OAUTH_TOKEN_URL: tokenUrl,
    EDGE_OAUTH_REDIRECT_URI: redirectUri,
  } = env;
  return clientId && clientSecret && authorizeUrl && tokenUrl && redirectUri
    ? { clientId, clientSecret, authorizeUrl, tokenUrl, redirectUri }
    : undefined;
}
