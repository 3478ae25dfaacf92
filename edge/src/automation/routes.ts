import type { Context } from 'hono';
// the module itself, not the `routes` namespace of @smarthome/protocol: that namespace holds every
// route spec (cloud ones included), and bundling it would build all their schemas at the edge's start
import {
  createAutomationRoute,
  listAutomationsRoute,
  getAutomationRoute,
  updateAutomationRoute,
  deleteAutomationRoute,
  automationTracesRoute,
  automationTriggerRoute,
  automationWebhookRoute,
} from '@smarthome/protocol/routes/automations';
import {
  HttpError,
  badRequest,
  conflict,
  notFound,
  parseJsonBody,
  rateLimited,
  readBodyBytes,
  type SpecRouter,
} from '@smarthome/protocol/server';
import type { AutomationEngine, WebhookOrigin, WebhookResult } from './engine.ts';

/** 1 MiB, counted on the bytes actually read. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

export interface AutomationRouteDeps {
  engine: AutomationEngine;
}

function webhookError(r: WebhookResult): HttpError | null {
  if (r.status === 200) return null;
  if (r.status === 429) return rateLimited(r.retryAfter);
  return r.status === 400 ? badRequest(r.message) : notFound(r.message);
}

/**
 * Where a webhook call came from. A request that reaches this app in-process through the
 * cloud tunnel carries `env.trusted.via` (see edge/src/api/app.ts): that is a cloud call,
 * never a local one. Anything arriving on the HTTP listener is local.
 */
export function webhookOrigin(c: Context): WebhookOrigin {
  const env = c.env as { trusted?: { via?: unknown } } | undefined;
  return env && typeof env === 'object' && env.trusted ? 'cloud' : 'local';
}

function remoteAddress(c: Context): string | null {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? null;
}

/** The edge's local automation API (same paths and shapes as the cloud) plus the local webhook receiver. */
export function mountAutomationRoutes(router: SpecRouter<any>, deps: AutomationRouteDeps): void {
  const { engine } = deps;
  // the engine's AutomationErrors (400, 404) are answered by the one onError
  router.add(createAutomationRoute, ({ body }) => engine.create(body));
  router.add(listAutomationsRoute, () => engine.list());
  router.add(getAutomationRoute, ({ params }) => {
    const a = engine.get(params.id);
    if (!a) throw notFound('automation not found');
    return a;
  });
  router.add(updateAutomationRoute, ({ params, body }) => engine.update(params.id, body));
  router.add(deleteAutomationRoute, ({ params }) => {
    if (!engine.remove(params.id)) throw notFound('automation not found');
    return { message: 'automation deleted' };
  });
  router.add(automationTracesRoute, ({ params }) => {
    if (!engine.get(params.id)) throw notFound('automation not found');
    return engine.traces(params.id);
  });
  router.add(automationTriggerRoute, ({ params }) => {
    const a = engine.get(params.id);
    if (!a) throw notFound('automation not found');
    // a disabled automation does not run (dispatch drops it): say so instead of a silent 200
    if (!a.enabled) throw conflict('automation is disabled');
    engine.triggerNow(params.id);
    return { message: 'automation triggered' };
  });
  router.add(automationWebhookRoute, async ({ c, params }) => {
    // 404 / 429 before reading the body: a flood or a guess costs no body bytes (the spec's
    // body is `readBody: 'manual'`: documented in OpenAPI, read here)
    const origin = webhookOrigin(c);
    const pre = webhookError(engine.webhookPrecheck(params.webhook_id, origin));
    if (pre) throw pre;
    const bytes = await readBodyBytes(c, WEBHOOK_BODY_LIMIT);
    if (bytes.byteLength === 0) throw badRequest('body must be a JSON object');
    const body = parseJsonBody(bytes);
    const out = webhookError(
      engine.dispatchWebhook(params.webhook_id, body, origin, {
        remote_addr: origin === 'local' ? remoteAddress(c) : null,
        method: c.req.method,
      }),
    );
    if (out) throw out;
    return c.body(null, 200);
  });
}
