import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { HaConfig, HaService } from '../ha/config.ts';
import { HaState } from '../ha/state.ts';

/** Home Assistant's REST API (`/api/`, homeassistant/components/api), served by edge and cloud. HA's errors: `{message}` with HA's status codes. */
const TAG = 'Home Assistant API';
const haErrors = { 400: 'message', 404: 'message', 401: 'message' } as const;

export const HaApiMessage = z.object({ message: z.string() });
export const HaServiceDomain = z.object({ domain: z.string(), services: z.record(z.string(), HaService) }).meta({ id: 'HaServiceDomain' });

export const haApiStatusRoute = defineRoute({
  method: 'get', path: '/api/', summary: 'API running', tag: TAG, auth: 'bearer', status: 200, response: HaApiMessage, errors: [401], errorShapes: haErrors,
});
export const haConfigRoute = defineRoute({
  method: 'get', path: '/api/config', summary: 'Configuration (location, units, version, components)', tag: TAG, auth: 'bearer',
  status: 200, response: HaConfig, errors: [401], errorShapes: haErrors,
});
export const haStatesRoute = defineRoute({
  method: 'get', path: '/api/states', summary: 'Every state', tag: TAG, auth: 'bearer', status: 200, response: z.array(HaState), errors: [401], errorShapes: haErrors,
});
export const haStateRoute = defineRoute({
  method: 'get', path: '/api/states/{entity_id}', summary: 'One state (404 "Entity not found.")', tag: TAG, auth: 'bearer',
  params: z.object({ entity_id: z.string() }), status: 200, response: HaState, errors: [401, 404], errorShapes: haErrors,
});
export const haServicesRoute = defineRoute({
  method: 'get', path: '/api/services', summary: 'Services by domain', tag: TAG, auth: 'bearer', status: 200, response: z.array(HaServiceDomain), errors: [401], errorShapes: haErrors,
});
export const HaServiceCallResponse = z.union([
  z.array(HaState),
  z.object({ changed_states: z.array(HaState), service_response: z.unknown() }),
]);
export const haCallServiceRoute = defineRoute({
  method: 'post', path: '/api/services/{domain}/{service}',
  summary: 'Call a service: the states that changed while it ran (with ?return_response: {changed_states, service_response})', tag: TAG, auth: 'bearer',
  params: z.object({ domain: z.string(), service: z.string() }), query: z.object({ return_response: z.string().optional() }),
  body: z.record(z.string(), z.unknown()).meta({ description: 'service data; entity_id/device_id/area_id target it' }), readBody: 'manual',
  status: 200, response: HaServiceCallResponse, errors: [400, 401, 404], errorShapes: haErrors,
});
export const haFireEventRoute = defineRoute({
  method: 'post', path: '/api/events/{event_type}', summary: 'Fire an event', tag: TAG, auth: 'bearer',
  params: z.object({ event_type: z.string() }), body: z.record(z.string(), z.unknown()).optional(), readBody: 'manual',
  status: 200, response: HaApiMessage, errors: [400, 401, 404], errorShapes: haErrors,
});
export const haCheckConfigRoute = defineRoute({
  method: 'post', path: '/api/config/core/check_config', summary: 'Check the configuration', tag: TAG, auth: 'bearer',
  status: 200, response: z.object({ result: z.enum(['valid', 'invalid']), errors: z.string().nullable(), warnings: z.string().nullable() }), errors: [401], errorShapes: haErrors,
});
