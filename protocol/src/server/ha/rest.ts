import type { Context, Hono } from 'hono';
import type { HaState } from '../../ha/index.ts';
import {
  haApiStatusRoute,
  haCallServiceRoute,
  haCheckConfigRoute,
  haConfigRoute,
  haFireEventRoute,
  haServicesRoute,
  haStateRoute,
  haStatesRoute,
} from '../../routes/ha.ts';
import type { RouteSpec } from '../../route.ts';
import { SpecRouter } from '../router.ts';
import { HaCommandError, type HaBackend } from './backend.ts';
import { mountHaRestData, readRestObject } from './rest-data.ts';

const message = (c: Context, status: 400 | 401 | 404, text: string) => c.json({ message: text }, status);

/**
 * Mounts Home Assistant's REST API (`/api/*`) on an app, answered by a HaBackend: the same
 * code on edge and cloud. Bearer auth as HA: no or a bad token is 401 with HA's plain body.
 * Returns the mounted specs (for /openapi.json).
 */
export function mountHaRest<P>(app: Hono<any>, backend: HaBackend<P>): RouteSpec[] {
  const router = new SpecRouter<P | null>(app, {
    authenticate: async (c) => {
      const match = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '');
      return match ? backend.authenticate({ access_token: match[1] }) : null;
    },
  });
  // HA answers 401 with a plain body (aiohttp's HTTPUnauthorized)
  const guard = <T>(c: Context, auth: P | null, then: (p: P) => T): T | Response =>
    auth === null ? c.text('401: Unauthorized', 401) : then(auth);

  router.add(haApiStatusRoute, ({ c, auth }) => guard(c, auth, () => ({ message: 'API running.' })));
  router.add(haConfigRoute, ({ c, auth }) => guard(c, auth, (p) => backend.getConfig(p)));
  router.add(haStatesRoute, ({ c, auth }) => guard(c, auth, (p) => backend.getStates(p)));
  router.add(haStateRoute, ({ c, auth, params }) =>
    guard(c, auth, async (p) => {
      const state = (await backend.getStates(p)).find((s) => s.entity_id === params.entity_id);
      return state ?? message(c, 404, 'Entity not found.');
    }),
  );
  router.add(haServicesRoute, ({ c, auth }) =>
    guard(c, auth, async (p) =>
      Object.entries(await backend.getServices(p)).map(([domain, services]) => ({ domain, services })),
    ),
  );
  router.add(haCallServiceRoute, ({ c, auth, params, query }) =>
    guard(c, auth, async (p) => {
      const data = await readRestObject(c, {});
      if (data === null) return message(c, 400, 'Data should be valid JSON.');
      const returnResponse = query.return_response !== undefined;
      const { entity_id, device_id, area_id, ...serviceData } = data as Record<string, unknown> & {
        entity_id?: string | string[];
        device_id?: string | string[];
        area_id?: string | string[];
      };
      // HA answers with the states that changed while the service ran
      const changed = new Map<string, HaState>();
      const unsubscribe = await backend.subscribeEvents(p, 'state_changed', (e) => {
        const s = (e.data as { new_state: HaState | null }).new_state;
        if (s) changed.set(s.entity_id, s);
      });
      try {
        const result = await backend.callService(p, {
          domain: params.domain,
          service: params.service,
          service_data: serviceData,
          target: { entity_id, device_id, area_id },
          return_response: returnResponse,
        });
        const states = [...changed.values()];
        return returnResponse ? { changed_states: states, service_response: result.response ?? null } : states;
      } catch (err) {
        if (!(err instanceof HaCommandError)) throw err;
        // HA's views turn Unauthorized into a 401 (a view-only share on the cloud); the body says why
        if (err.code === 'unauthorized') return message(c, 401, err.message);
        if (err.code === 'service_validation_error' && returnResponse)
          return message(c, 400, 'Service does not support responses. Remove return_response from request.');
        return message(c, 400, err.message);
      } finally {
        unsubscribe();
      }
    }),
  );
  router.add(haFireEventRoute, ({ c, auth, params }) =>
    guard(c, auth, async (p) => {
      const data = await readRestObject(c, {});
      if (data === null) return message(c, 400, 'Event data should be a JSON object');
      try {
        await backend.fireEvent(p, params.event_type, data);
      } catch (err) {
        if (!(err instanceof HaCommandError)) throw err;
        return message(c, err.code === 'unauthorized' ? 401 : 400, err.message);
      }
      return { message: `Event ${params.event_type} fired.` };
    }),
  );
  router.add(haCheckConfigRoute, ({ c, auth }) =>
    guard(c, auth, () => ({ result: 'valid' as const, errors: null, warnings: null })),
  );
  mountHaRestData(router, backend, guard);
  return router.routes;
}
