import type { Context } from 'hono';
import {
  haDeleteStateRoute,
  haEventsRoute,
  haHistoryRoute,
  haHistorySinceRoute,
  haLogbookRoute,
  haLogbookSinceRoute,
  haSetStateRoute,
  haTemplateRoute,
} from '../../routes/ha.ts';
import type { SpecRouter } from '../router.ts';
import { DEFAULT_BODY_LIMIT, readBodyBytes } from '../body.ts';
import { HttpError } from '../errors.ts';
import { parseJson } from '../json.ts';
import { HaCommandError, HaRawJson, type HaBackend } from './backend.ts';
import { parseHaTime } from './optional-commands.ts';
import { isJsonObject } from '../../common.ts';

/**
 * The REST routes over optional backend methods (homeassistant/components/api, history,
 * logbook): a backend without the method answers 404 `{message}`.
 */

type Guard<P> = <T>(c: Context, auth: P | null, then: (p: P) => T) => T | Response;
const message = (c: Context, status: 400 | 401 | 404, text: string) => c.json({ message: text }, status);

/**
 * A relayed operation's HA error in HA's REST terms (the cloud's backend relays these to edges):
 * unauthorized 401, not_found 404, else 400 (an offline edge too, as for a relayed service call).
 */
function restError(c: Context, err: unknown): Response {
  if (!(err instanceof HaCommandError)) throw err;
  return message(c, err.code === 'unauthorized' ? 401 : err.code === 'not_found' ? 404 : 400, err.message);
}
const DAY_S = 86_400;
/** HA's valid_entity_id */
const ENTITY_ID = /^(?!.+__)(?!_)[\da-z_]+(?<!_)\.(?!_)[\da-z_]+(?<!_)$/;

const utf8 = new TextDecoder();

/**
 * A REST body's text, read as it arrives and at most 1 MiB, as HA's own server (aiohttp's
 * client_max_size): a larger one is a 413 `{message}` in aiohttp's words, before it is all in memory.
 */
async function readRestText(c: Context): Promise<string> {
  try {
    return utf8.decode(await readBodyBytes(c, DEFAULT_BODY_LIMIT));
  } catch (err) {
    if (err instanceof HttpError && err.status === 413)
      throw new HttpError(413, `Maximum request body size ${DEFAULT_BODY_LIMIT} exceeded`, { shape: 'message' });
    throw err;
  }
}

/**
 * A REST body that must be a JSON object (at most 1 MiB, nested at most MAX_JSON_DEPTH deep); null
 * when it is not, for the route's 400 in HA's words. `empty` is what a blank body counts as: HA's
 * service and event views take none as `{}`, the others refuse it.
 */
export async function readRestObject(
  c: Context,
  empty: Record<string, unknown> | null = null,
): Promise<Record<string, unknown> | null> {
  const text = await readRestText(c);
  if (!text.trim()) return empty;
  try {
    const value: unknown = parseJson(text);
    return isJsonObject(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * The optional REST routes, each mounted (and documented) only when the backend implements what
 * it needs: a server without history answers its generic 404 there and does not list the route.
 */
export function mountHaRestData<P>(router: SpecRouter<P | null>, backend: HaBackend<P>, guard: Guard<P>): void {
  const missing = (c: Context) => message(c, 404, 'Not found.');

  if (backend.eventListeners)
    router.add(haEventsRoute, ({ c, auth }) =>
      guard(c, auth, async (p) => (backend.eventListeners ? backend.eventListeners(p) : missing(c))),
    );

  if (backend.setState)
    router.add(haSetStateRoute, ({ c, auth, params }) =>
      guard(c, auth, async (p) => {
        if (!backend.setState) return missing(c);
        const body = await readRestObject(c);
        if (body === null) return message(c, 400, 'Invalid JSON specified.');
        const { state, attributes, force_update: force } = body;
        if (state === undefined || state === null) return message(c, 400, 'No state specified.');
        if (typeof state === 'object' || String(state).length > 255) return message(c, 400, 'Invalid state specified.');
        if (attributes !== undefined && attributes !== null && !isJsonObject(attributes))
          return message(c, 400, 'Invalid JSON specified.');
        try {
          const out = await backend.setState(
            p,
            params.entity_id.toLowerCase(),
            String(state),
            attributes ?? {},
            force === true,
          );
          c.header('Location', `/api/states/${out.state.entity_id}`);
          return c.json(out.state, out.created ? 201 : 200);
        } catch (err) {
          return restError(c, err);
        }
      }),
    );

  if (backend.removeState)
    router.add(haDeleteStateRoute, ({ c, auth, params }) =>
      guard(c, auth, async (p) => {
        if (!backend.removeState) return missing(c);
        try {
          return (await backend.removeState(p, params.entity_id))
            ? { message: 'Entity removed.' }
            : message(c, 404, 'Entity not found.');
        } catch (err) {
          return restError(c, err);
        }
      }),
    );

  if (backend.renderTemplate)
    router.add(haTemplateRoute, ({ c, auth }) =>
      guard(c, auth, async (p) => {
        if (!backend.renderTemplate) return missing(c);
        const body = await readRestObject(c);
        if (body === null) return message(c, 400, 'Error rendering template: Invalid JSON specified.');
        const { template, variables } = body;
        if (typeof template !== 'string') return message(c, 400, "Error rendering template: 'template' is missing");
        if (variables !== undefined && !isJsonObject(variables))
          return message(c, 400, 'Error rendering template: variables must be an object');
        try {
          return c.text(await backend.renderTemplate(p, template, variables));
        } catch (err) {
          if (err instanceof HaCommandError) return message(c, 400, `Error rendering template: ${err.message}`);
          throw err;
        }
      }),
    );

  // GET /api/history/period[/{timestamp}] (homeassistant/components/history/__init__.py HistoryPeriodView)
  const history = (c: Context, p: P, timestamp: string | undefined, query: Record<string, string | undefined>) => {
    if (!backend.history) return missing(c);
    const now = Date.now() / 1000;
    let start = now - DAY_S;
    if (timestamp !== undefined) {
      const parsed = parseHaTime(timestamp);
      if (parsed === null) return message(c, 400, 'Invalid datetime');
      start = parsed;
    }
    const ids = query.filter_entity_id?.trim().toLowerCase().split(',').filter(Boolean) ?? [];
    if (ids.length === 0) return message(c, 400, 'filter_entity_id is missing');
    if (ids.some((id) => !ENTITY_ID.test(id))) return message(c, 400, 'Invalid filter_entity_id');
    if (start > now) return c.json([]);
    let end = start + DAY_S;
    if (query.end_time) {
      const parsed = parseHaTime(query.end_time);
      if (parsed === null) return message(c, 400, 'Invalid end_time');
      end = parsed;
    }
    return backend
      .history(p, {
        format: 'rest',
        start,
        end,
        entity_ids: ids,
        include_start_time_state: query.skip_initial_state === undefined,
        significant_changes_only: query.significant_changes_only !== '0',
        minimal_response: query.minimal_response !== undefined,
        no_attributes: query.no_attributes !== undefined,
      })
      .then(
        (out) =>
          out instanceof HaRawJson
            ? c.body(out.json, 200, { 'content-type': 'application/json; charset=utf-8' })
            : c.json(out),
        (err: unknown) => restError(c, err),
      );
  };
  if (backend.history)
    router.add(haHistoryRoute, ({ c, auth }) => guard(c, auth, (p) => history(c, p, undefined, c.req.query())));
  if (backend.history)
    router.add(haHistorySinceRoute, ({ c, auth, params }) =>
      guard(c, auth, (p) => history(c, p, (params as { timestamp: string }).timestamp, c.req.query())),
    );

  // GET /api/logbook[/{timestamp}] (homeassistant/components/logbook/rest_api.py)
  const logbook = async (
    c: Context,
    p: P,
    timestamp: string | undefined,
    query: Record<string, string | undefined>,
  ) => {
    if (!backend.logbook) return missing(c);
    let start: number;
    if (timestamp !== undefined) {
      const parsed = parseHaTime(timestamp);
      if (parsed === null) return message(c, 400, 'Invalid datetime');
      start = parsed;
    } else {
      const midnight = new Date();
      midnight.setHours(0, 0, 0, 0);
      start = midnight.getTime() / 1000;
    }
    const period = query.period === undefined ? 1 : Number(query.period);
    if (!Number.isInteger(period) || period < 1) return message(c, 400, 'Invalid period');
    let end: number;
    if (query.end_time) {
      const parsed = parseHaTime(query.end_time);
      if (parsed === null) return message(c, 400, 'Invalid end_time');
      end = parsed;
    } else {
      start -= (period - 1) * DAY_S;
      end = start + period * DAY_S;
    }
    let entityIds: string[] | undefined;
    if (query.entity) {
      entityIds = query.entity.split(',').map((s) => s.trim().toLowerCase());
      if (entityIds.some((id) => !ENTITY_ID.test(id))) return message(c, 400, 'Invalid entity id(s)');
    }
    try {
      return c.json(await backend.logbook(p, { format: 'rest', start, end, entity_ids: entityIds }));
    } catch (err) {
      return restError(c, err);
    }
  };
  if (backend.logbook)
    router.add(haLogbookRoute, ({ c, auth }) => guard(c, auth, (p) => logbook(c, p, undefined, c.req.query())));
  if (backend.logbook)
    router.add(haLogbookSinceRoute, ({ c, auth, params }) =>
      guard(c, auth, (p) => logbook(c, p, (params as { timestamp: string }).timestamp, c.req.query())),
    );
}
