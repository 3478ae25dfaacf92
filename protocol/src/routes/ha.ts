import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { HaConfig, HaService } from '../ha/config.ts';
import { HaState } from '../ha/state.ts';

/** Home Assistant's REST API (`/api/`, homeassistant/components/api), served by edge and cloud. HA's errors: `{message}` with HA's status codes. */
const TAG = 'Home Assistant API';
const haErrors = { 400: 'message', 404: 'message', 401: 'message' } as const;

export const HaApiMessage = z.object({ message: z.string() });
export const HaServiceDomain = z
  .object({ domain: z.string(), services: z.record(z.string(), HaService) })
  .meta({ id: 'HaServiceDomain' });

export const haApiStatusRoute = defineRoute({
  method: 'get',
  path: '/api/',
  summary: 'API running',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: HaApiMessage,
  errors: [401],
  errorShapes: haErrors,
});
export const haConfigRoute = defineRoute({
  method: 'get',
  path: '/api/config',
  summary: 'Configuration (location, units, version, components)',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: HaConfig,
  errors: [401],
  errorShapes: haErrors,
});
export const haStatesRoute = defineRoute({
  method: 'get',
  path: '/api/states',
  summary: 'Every state',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: z.array(HaState),
  errors: [401],
  errorShapes: haErrors,
});
export const haStateRoute = defineRoute({
  method: 'get',
  path: '/api/states/{entity_id}',
  summary: 'One state (404 "Entity not found.")',
  tag: TAG,
  auth: 'bearer',
  params: z.object({ entity_id: z.string() }),
  status: 200,
  response: HaState,
  errors: [401, 404],
  errorShapes: haErrors,
});
export const haServicesRoute = defineRoute({
  method: 'get',
  path: '/api/services',
  summary: 'Services by domain',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: z.array(HaServiceDomain),
  errors: [401],
  errorShapes: haErrors,
});
export const HaServiceCallResponse = z.union([
  z.array(HaState),
  z.object({ changed_states: z.array(HaState), service_response: z.unknown() }),
]);
export const haCallServiceRoute = defineRoute({
  method: 'post',
  path: '/api/services/{domain}/{service}',
  summary:
    'Call a service: the states that changed while it ran (with ?return_response: {changed_states, service_response})',
  tag: TAG,
  auth: 'bearer',
  params: z.object({ domain: z.string(), service: z.string() }),
  query: z.object({ return_response: z.string().optional() }),
  body: z.record(z.string(), z.unknown()).meta({ description: 'service data; entity_id/device_id/area_id target it' }),
  readBody: 'manual',
  status: 200,
  response: HaServiceCallResponse,
  errors: [400, 401, 404],
  errorShapes: haErrors,
});
export const haFireEventRoute = defineRoute({
  method: 'post',
  path: '/api/events/{event_type}',
  summary: 'Fire an event',
  tag: TAG,
  auth: 'bearer',
  params: z.object({ event_type: z.string() }),
  body: z.record(z.string(), z.unknown()).optional(),
  readBody: 'manual',
  status: 200,
  response: HaApiMessage,
  errors: [400, 401, 404],
  errorShapes: haErrors,
});
export const haCheckConfigRoute = defineRoute({
  method: 'post',
  path: '/api/config/core/check_config',
  summary: 'Check the configuration',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: z.object({
    result: z.enum(['valid', 'invalid']),
    errors: z.string().nullable(),
    warnings: z.string().nullable(),
  }),
  errors: [401],
  errorShapes: haErrors,
});

// ---- states, events, templates, history and logbook (optional on a backend: 404 when it lacks them)
export const haEventsRoute = defineRoute({
  method: 'get',
  path: '/api/events',
  summary: 'Event types with listeners, and how many',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: z.array(z.object({ event: z.string(), listener_count: z.number().int() })),
  errors: [401, 404],
  errorShapes: haErrors,
});
export const HaSetStateBody = z
  .object({
    state: z.unknown(),
    attributes: z.record(z.string(), z.unknown()).optional(),
    force_update: z.boolean().optional(),
  })
  .meta({ id: 'HaSetStateBody' });
export const haSetStateRoute = defineRoute({
  method: 'post',
  path: '/api/states/{entity_id}',
  summary: 'Create (201) or update (200) a state; Location: /api/states/{entity_id}',
  tag: TAG,
  auth: 'bearer',
  params: z.object({ entity_id: z.string() }),
  body: HaSetStateBody,
  readBody: 'manual',
  status: 200,
  response: HaState,
  errors: [400, 401, 404],
  errorShapes: haErrors,
});
export const haDeleteStateRoute = defineRoute({
  method: 'delete',
  path: '/api/states/{entity_id}',
  summary: 'Remove a state ("Entity removed." / 404 "Entity not found.")',
  tag: TAG,
  auth: 'bearer',
  params: z.object({ entity_id: z.string() }),
  status: 200,
  response: HaApiMessage,
  errors: [400, 401, 404],
  errorShapes: haErrors,
});
export const haTemplateRoute = defineRoute({
  method: 'post',
  path: '/api/template',
  summary: 'Render a template: the result as text/plain',
  tag: TAG,
  auth: 'bearer',
  body: z.object({ template: z.string(), variables: z.record(z.string(), z.unknown()).optional() }),
  readBody: 'manual',
  status: 200,
  response: z.string().meta({ description: 'text/plain' }),
  errors: [400, 401, 404],
  errorShapes: haErrors,
});

const HistoryQuery = z.object({
  filter_entity_id: z.string().optional().meta({ description: 'comma-separated entity ids (required)' }),
  end_time: z.string().optional(),
  minimal_response: z.string().optional().meta({ description: 'present: after the first, only {state, last_changed}' }),
  no_attributes: z.string().optional().meta({ description: 'present: attributes {}' }),
  significant_changes_only: z.string().optional().meta({ description: '0: attribute-only changes too' }),
  skip_initial_state: z.string().optional().meta({ description: 'present: no state at the start of the period' }),
});
export const HaHistoryItem = z.union([
  HaState.omit({ context: true, last_reported: true }).extend({ state: z.string().nullable() }),
  z.object({ state: z.string().nullable(), last_changed: z.string() }),
]);
const historyRoute = (path: string, summary: string, params?: z.ZodObject) =>
  defineRoute({
    method: 'get',
    path,
    summary,
    tag: TAG,
    auth: 'bearer',
    params,
    query: HistoryQuery,
    status: 200,
    response: z.array(z.array(HaHistoryItem)),
    errors: [400, 401, 404],
    errorShapes: haErrors,
  });
export const haHistoryRoute = historyRoute('/api/history/period', 'State history of the last day, a list per entity');
export const haHistorySinceRoute = historyRoute(
  '/api/history/period/{timestamp}',
  'State history from {timestamp} (one day, or until end_time), a list per entity',
  z.object({ timestamp: z.string() }),
);

const LogbookQuery = z.object({
  entity: z.string().optional().meta({ description: 'entity ids, comma-separated' }),
  end_time: z.string().optional(),
  period: z.string().optional().meta({ description: 'days (default 1) when there is no end_time' }),
});
export const HaRestLogbookEntry = z.object({
  when: z.string(),
  name: z.string().optional(),
  message: z.string().optional(),
  domain: z.string().optional(),
  entity_id: z.string().optional(),
  state: z.string().nullable().optional(),
  icon: z.string().optional(),
});
const logbookRoute = (path: string, summary: string, params?: z.ZodObject) =>
  defineRoute({
    method: 'get',
    path,
    summary,
    tag: TAG,
    auth: 'bearer',
    params,
    query: LogbookQuery,
    status: 200,
    response: z.array(HaRestLogbookEntry),
    errors: [400, 401, 404],
    errorShapes: haErrors,
  });
export const haLogbookRoute = logbookRoute('/api/logbook', 'Logbook of today (from local midnight)');
export const haLogbookSinceRoute = logbookRoute(
  '/api/logbook/{timestamp}',
  'Logbook from {timestamp} (one day, or until end_time)',
  z.object({ timestamp: z.string() }),
);
