import { Hono, type Context } from 'hono';
import { buildOpenApiDocument, type MqttCredentials } from '@smarthome/protocol';
import {
  edgeCallServiceRoute,
  edgeCreateMqttCredentialsRoute,
  edgeFireEventRoute,
  edgeDeleteMqttUserRoute,
  edgeGetDeviceRoute,
  edgeGetStateRoute,
  edgeHealthRoute,
  edgeListDevicesRoute,
  edgeListMqttOwnersRoute,
  edgeListMqttUsersRoute,
  edgeListStatesRoute,
  edgeSetMqttOwnerRoute,
  type CreateMqttCredentialsBody,
  type MqttOwnership,
  type MqttUser,
  type SetMqttOwnerBody,
} from '@smarthome/protocol/edge-local';
import { SpecRouter, installErrorHandling, notFound, unauthorized, type Handled } from '@smarthome/protocol/server';
import type { RouteSpec } from '@smarthome/protocol';
import type { LocalTokenStore } from '../auth/tokens.ts';
import type { Logger } from '../log.ts';
import type { Registry } from '../registry/registry.ts';
import type { ServiceRegistry } from '../services/services.ts';
import type { StateMachine } from '../states/state-machine.ts';

/** Who is calling: a local token, or the edge's own tunnel (in-process, already authorized by the cloud). */
export type Caller = { kind: 'public' } | { kind: 'token'; tokenId: number } | { kind: 'trusted'; via: string };

/** Hono `env` for in-process calls (the tunnel): `{ trusted: { via: 'cloud' } }` skips the bearer check. */
export interface TrustedEnv {
  trusted?: { via: string };
}

export interface ApiDeps {
  registry: Registry;
  states: StateMachine;
  services: ServiceRegistry;
  tokens: LocalTokenStore;
  log: Logger;
  createMqttCredentials(input: CreateMqttCredentialsBody): Promise<MqttCredentials>;
  listMqttUsers(): MqttUser[];
  deleteMqttUser(username: string): boolean;
  listMqttOwnership(): MqttOwnership[];
  /** throws InvalidInputError (unknown user) or NotFoundError (nothing to reassign): EdgeErrors, answered by onError */
  setMqttOwner(input: SetMqttOwnerBody): MqttOwnership[];
  /** more capabilities' routes (config flows, media, automations) */
  mountMore?: (router: SpecRouter<Caller>) => void;
  /** writes what is written behind (states, retained messages) now; throws when the database refuses */
  commit?: () => void;
  /** fires a named event on the edge bus (POST /v1/events/{event_type}) */
  fireEvent?: (eventType: string, data: Record<string, unknown>) => void;
  /** routes with their own authentication (Home Assistant's /api/*): returns their specs for /openapi.json */
  mountOwnAuth?: (app: Hono) => RouteSpec[];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function authenticate(tokens: LocalTokenStore) {
  return async (c: Context, spec: RouteSpec): Promise<Caller> => {
    if (spec.auth === 'none') return { kind: 'public' };
    const env = c.env as TrustedEnv | undefined;
    if (env && typeof env === 'object' && env.trusted && typeof env.trusted.via === 'string')
      return { kind: 'trusted', via: env.trusted.via };
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const tokenId = match ? tokens.verify(match[1]) : null;
    if (tokenId === null) throw unauthorized();
    return { kind: 'token', tokenId };
  };
}

/** The edge's local HTTP API (same paths and shapes as the cloud for what the edge owns). */
export function createApiApp(deps: ApiDeps): Hono {
  const app = new Hono();
  installErrorHandling(app, deps.log);
  // What a write answers is committed first: the states it changed too, which MQTT writes behind.
  const commit = deps.commit;
  if (commit) {
    app.use('*', async (c, next) => {
      await next();
      if (!SAFE_METHODS.has(c.req.method)) commit();
    });
  }
  const router = new SpecRouter<Caller>(app, { authenticate: authenticate(deps.tokens) });
  const { registry, states, services } = deps;

  router.add(edgeHealthRoute, () => ({ status: 'ok' as const }));

  router.add(edgeListDevicesRoute, () => registry.listDevices());

  router.add(edgeGetDeviceRoute, ({ params }: Handled<{ id: string }, unknown, unknown, Caller>) => {
    const device = registry.getDevice(Number(params.id));
    if (!device) throw notFound('device not found');
    return { device, entities: registry.entitiesOfDevice(device.id) };
  });

  router.add(edgeListStatesRoute, () => states.all());

  router.add(edgeGetStateRoute, ({ params }) => {
    const state = states.get(params.entity_id);
    if (!state) throw notFound(`entity ${params.entity_id} not found`);
    return state;
  });

  router.add(edgeCallServiceRoute, async ({ params, body }) => {
    const { entity_id: target, ...data } = body;
    const entityIds = Array.isArray(target) ? target : [target];
    const changed = await services.call({
      domain: params.domain,
      service: params.service,
      entity_ids: entityIds,
      data,
    });
    return { changed_states: changed };
  });

  const fireEvent = deps.fireEvent;
  if (fireEvent) {
    router.add(edgeFireEventRoute, ({ params, body }) => {
      fireEvent(params.event_type, body);
      return { message: `Event ${params.event_type} fired.` };
    });
  }

  router.add(edgeCreateMqttCredentialsRoute, ({ body }) => deps.createMqttCredentials(body));

  router.add(edgeListMqttUsersRoute, () => deps.listMqttUsers());

  router.add(edgeDeleteMqttUserRoute, ({ params }) => {
    if (!deps.deleteMqttUser(params.username)) throw notFound(`MQTT user ${params.username} not found`);
    return { message: `MQTT user ${params.username} deleted` };
  });

  router.add(edgeListMqttOwnersRoute, () => deps.listMqttOwnership());

  router.add(edgeSetMqttOwnerRoute, ({ body }) => deps.setMqttOwner(body));

  deps.mountMore?.(router);
  const ownAuthRoutes = deps.mountOwnAuth?.(app) ?? [];

  const doc = () => buildOpenApiDocument([...router.routes, ...ownAuthRoutes], { title: 'Smart-home edge local API' });
  let cached: ReturnType<typeof doc> | null = null;
  app.get('/openapi.json', (c) => c.json((cached ??= doc())));

  return app;
}
