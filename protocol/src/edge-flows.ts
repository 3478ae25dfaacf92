/**
 * Routes of the edge's local API for config flows, config entries and the media source
 * (issue 5). Paths and shapes are the cloud's (portal-api.md + contract.md); the signed
 * media URL is edge-only.
 */
import { z } from 'zod';
import { MessageBody, IntIdParam } from './common.ts';
import { ConfigEntry } from './devices.ts';
import { StartFlowBody, AdvanceFlowBody, ConfigFlowResult, FlowHandlers } from './config-flow.ts';
import { BrowseQuery, ResolveBody, ResolvedMedia, MediaNode } from './media.ts';
import { defineRoute } from './route.ts';

export const FlowIdParams = z.object({ flowId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });
export const ConfigEntryIdParams = z.object({ id: IntIdParam });
export const ConfigEntryList = z.array(ConfigEntry).meta({ id: 'ConfigEntryList' });

/** `GET /v1/media/{token}/{filename}`: the token is a short-lived HS256 JWT naming provider and path. */
export const SignedMediaParams = z.object({
  token: z
    .string()
    .min(1)
    .max(4096)
    .regex(/^[A-Za-z0-9_.-]+$/),
  filename: z.string().min(1).max(1024),
});

/**
 * The OAuth 2.0 redirect (RFC 6749 §4.1.2): the provider sends the browser back with `code`
 * and `state` (or `error`). The state is the flow's random OAuth state, so it names the flow
 * and authorizes the call; no bearer token is needed.
 */
export const OAuthCallbackQuery = z.object({
  state: z.string().min(1).max(512),
  code: z.string().min(1).max(4096).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(1024).optional(),
});

export const edgeConfigFlowRoutes = {
  listHandlers: defineRoute({
    method: 'get',
    path: '/v1/config_flow/handlers',
    summary: 'List the integrations that can be set up with a config flow',
    tag: 'config-flow',
    auth: 'bearer',
    status: 200,
    response: FlowHandlers,
    errors: [401],
  }),
  startFlow: defineRoute({
    method: 'post',
    path: '/v1/config_flow',
    summary: 'Start a config flow for an integration',
    tag: 'config-flow',
    auth: 'bearer',
    body: StartFlowBody,
    status: 200,
    response: ConfigFlowResult,
    errors: [400, 401, 404, 409],
  }),
  advanceFlow: defineRoute({
    method: 'post',
    path: '/v1/config_flow/{flowId}/advance',
    summary: 'Submit the input of the current step',
    tag: 'config-flow',
    auth: 'bearer',
    params: FlowIdParams,
    body: AdvanceFlowBody,
    status: 200,
    response: ConfigFlowResult,
    errors: [400, 401, 404],
  }),
  getFlow: defineRoute({
    method: 'get',
    path: '/v1/config_flow/{flowId}',
    summary:
      "A flow's current step, or how it ended (kept for the flow's TTL after the end, e.g. for the portal after an OAuth redirect)",
    tag: 'config-flow',
    auth: 'bearer',
    params: FlowIdParams,
    status: 200,
    response: ConfigFlowResult,
    errors: [401, 404],
  }),
  deleteFlow: defineRoute({
    method: 'delete',
    path: '/v1/config_flow/{flowId}',
    summary: 'Abort and delete a config flow',
    tag: 'config-flow',
    auth: 'bearer',
    params: FlowIdParams,
    status: 200,
    response: MessageBody,
    errors: [401, 404],
  }),
  oauthCallback: defineRoute({
    method: 'get',
    path: '/v1/config_flow/oauth/callback',
    summary:
      "OAuth 2.0 redirect target: advances the flow whose state matches; a browser is sent on (303) to the portal's /integrations/oauth?flow_id=…, which reads the result with GET /v1/config_flow/{flowId}; an unknown or expired state sends a browser to /integrations/oauth?error=unknown_state; with Accept: application/json the answer is the flow result (or 404)",
    tag: 'config-flow',
    auth: 'none',
    query: OAuthCallbackQuery,
    status: 200,
    response: ConfigFlowResult,
    errors: [400, 404],
  }),
  listEntries: defineRoute({
    method: 'get',
    path: '/v1/config_entries',
    summary: 'List config entries',
    tag: 'config-flow',
    auth: 'bearer',
    status: 200,
    response: ConfigEntryList,
    errors: [401],
  }),
  deleteEntry: defineRoute({
    method: 'delete',
    path: '/v1/config_entries/{id}',
    summary: 'Remove a config entry with its devices and entities',
    tag: 'config-flow',
    auth: 'bearer',
    params: ConfigEntryIdParams,
    status: 200,
    response: MessageBody,
    errors: [401, 404],
  }),
};

export const edgeMediaRoutes = {
  browse: defineRoute({
    method: 'get',
    path: '/v1/media-source/browse',
    summary: 'Browse the media source tree (root lists providers)',
    tag: 'media',
    auth: 'bearer',
    orgContext: true,
    query: BrowseQuery,
    status: 200,
    response: MediaNode,
    errors: [400, 401, 404],
  }),
  resolve: defineRoute({
    method: 'post',
    path: '/v1/media-source/resolve',
    summary: 'Resolve a media-source URI to a playable (signed) URL',
    tag: 'media',
    auth: 'bearer',
    orgContext: true,
    body: ResolveBody,
    status: 200,
    response: ResolvedMedia,
    errors: [400, 401, 404],
  }),
  signedMedia: defineRoute({
    method: 'get',
    path: '/v1/media/{token}/{filename}',
    summary: 'Stream media content named by a signed token (HTTP Range supported; 206, 416)',
    tag: 'media',
    auth: 'none',
    params: SignedMediaParams,
    status: 200,
    emptyResponse: true,
    errors: [403, 404, 416],
  }),
};
