import type { Context } from 'hono';
import { markedSecrets, redactAutomationSecrets, redactTraceSecrets } from './redact.ts';
import { Automation, routes, type AutomationBody } from '@smarthome/protocol';
import {
  HttpError,
  badRequest,
  edgeOffline,
  notFound,
  parseJsonBody,
  rateLimited,
  readBodyBytes,
} from '@smarthome/protocol/server';
import type { CloudRouter } from '../context.ts';
import type { Logger } from '../log.ts';
import { clientAddress } from '../http/client-address.ts';
import { userOf } from '../http/route-inputs.ts';
import { resolveScope } from '../orgs/scope.ts';
import { assertWithinLimit, type BillingDeps } from '../billing/plans.ts';
import { passThrough, type EntityAccess } from '../devices/access.ts';
import type { RpcResult } from '../tunnel/connection.ts';
import { AutomationDirectory, type AutomationDirectoryDeps } from './directory.ts';
import type { WebhookRateLimiter } from './rate-limit.ts';

/** 1 MiB, counted on the bytes actually read. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/**
 * The cloud's automation API. Definitions are stored and run on the edges:
 * - list answers from the mirror's summaries (last known while an edge is offline);
 * - one automation, its traces, create, update and delete are relayed to the owning edge,
 *   found through the mirror of the edges the caller can see (404 otherwise);
 * - the webhook receiver relays to the owning edge marked as a cloud call (tunnel origin),
 *   so a local_only trigger refuses it;
 * - cloud-bootstrap collects the enabled definitions from the scope's online edges.
 */
export interface AutomationRoutesDeps extends AutomationDirectoryDeps, BillingDeps {
  log: Logger;
  access: EntityAccess;
  /** per-webhook flood control of the webhook receiver (in memory, or shared through Redis) */
  webhookLimiter: WebhookRateLimiter;
}

export const mountAutomationRoutes = (router: CloudRouter, s: AutomationRoutesDeps): void =>
  mount(router, s, s.webhookLimiter);

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

function mount(router: CloudRouter, s: AutomationRoutesDeps, limiter: WebhookRateLimiter): void {
  const dir = new AutomationDirectory(s);
  const relay = (
    edgeId: number,
    method: Method,
    path: string,
    body: unknown,
    userId: string | null,
    c: Context,
  ): Promise<RpcResult> => s.access.relay(edgeId, method, path, body, { userId, remoteAddr: clientAddress(c) });
  const itemPath = (id: string) => `/v1/automations/${encodeURIComponent(id)}`;
  /** What the edge stores knows nothing of cloud edge ids: the cloud says which edge it is on. */
  const onEdge = (a: unknown, edgeId: number) => ({ ...(a as Automation), edge_id: edgeId });
  const forEdge = (body: AutomationBody): Omit<AutomationBody, 'edge_id'> => {
    const { edge_id: _ignored, ...rest } = body;
    return rest;
  };

  router.add(routes.cloudListAutomationsRoute, async ({ auth, c, query }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    let ids = (await dir.grants(scope)).map((g) => g.edgeId);
    if (query.edge_id) ids = ids.filter((id) => id === Number(query.edge_id));
    return dir.summaries(ids) as never;
  });

  router.add(routes.cloudCreateAutomationRoute, async ({ auth, c, body }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const edge = await dir.pickEdge(scope, body.edge_id);
    await assertWithinLimit(s, AutomationDirectory.billingScope(edge, scope), 'automations');
    const created = onEdge(
      passThrough(await relay(edge.id, 'POST', '/v1/automations', forEdge(body), scope.userId, c)),
      edge.id,
    );
    await dir.remember(edge.id, created);
    return created as never;
  });

  router.add(routes.cloudGetAutomationRoute, async ({ auth, c, params }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const { summary, grant } = await dir.locate(scope, params.id, 'view');
    const automation = onEdge(
      passThrough(await relay(summary.edge_id, 'GET', itemPath(params.id), undefined, scope.userId, c)),
      summary.edge_id,
    );
    return (grant.role === 'member' ? redactAutomationSecrets(automation) : automation) as never;
  });

  router.add(routes.cloudUpdateAutomationRoute, async ({ auth, c, params, body }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const { summary } = await dir.locate(scope, params.id, 'edit');
    if (body.edge_id !== undefined && body.edge_id !== summary.edge_id)
      throw badRequest('edge_id: an automation cannot move to another edge');
    const updated = onEdge(
      passThrough(await relay(summary.edge_id, 'PUT', itemPath(params.id), forEdge(body), scope.userId, c)),
      summary.edge_id,
    );
    await dir.remember(summary.edge_id, updated);
    if (summary.webhook_id && summary.webhook_id !== updated.webhook_id) await limiter.forget(summary.webhook_id);
    return updated as never;
  });

  router.add(routes.cloudDeleteAutomationRoute, async ({ auth, c, params }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const { summary } = await dir.locate(scope, params.id, 'edit');
    let out: unknown;
    try {
      out = passThrough(await relay(summary.edge_id, 'DELETE', itemPath(params.id), undefined, scope.userId, c));
    } catch (err) {
      // Already gone on the edge: the mirror was behind; make it agree.
      if (err instanceof HttpError && err.status === 404) await dir.forget(summary.edge_id, params.id);
      throw err;
    }
    await dir.forget(summary.edge_id, params.id);
    if (summary.webhook_id) await limiter.forget(summary.webhook_id);
    return out as never;
  });

  router.add(routes.cloudAutomationTracesRoute, async ({ auth, c, params }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const { summary, grant } = await dir.locate(scope, params.id, 'view');
    const traces = passThrough(
      await relay(summary.edge_id, 'GET', `${itemPath(params.id)}/traces`, undefined, scope.userId, c),
    );
    if (grant.role !== 'member') return traces as never;
    // a member: the values the definition marks secret are hidden in its runs too
    const definition = passThrough(
      await relay(summary.edge_id, 'GET', itemPath(params.id), undefined, scope.userId, c),
    );
    return redactTraceSecrets(traces, markedSecrets(definition)) as never;
  });

  // Running is a change to the home like a service call: edit rights, as for updating it.
  router.add(routes.cloudAutomationTriggerRoute, async ({ auth, c, params }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const { summary } = await dir.locate(scope, params.id, 'edit');
    return passThrough(
      await relay(summary.edge_id, 'POST', `${itemPath(params.id)}/trigger`, undefined, scope.userId, c),
    ) as never;
  });

  // No Authorization: the webhook_id is the secret. Cheap checks first, the body last: the spec
  // documents the body (WebhookBody) with `readBody: 'manual'`, so the router reads none of it.
  router.add(routes.cloudAutomationWebhookRoute, async ({ c, params }) => {
    const hook = await dir.findWebhook(params.webhook_id);
    if (!hook || !hook.enabled) throw notFound('webhook not found');
    const wait = await limiter.take(params.webhook_id);
    if (wait > 0) throw rateLimited(wait);
    // before reading up to 1 MiB for nothing (scale-out: the edge may be connected to another replica)
    if (!dir.reachable(hook.edgeId, hook.edgeStatus)) throw edgeOffline();
    const bytes = await readBodyBytes(c, WEBHOOK_BODY_LIMIT);
    const body = parseObject(bytes);
    // origin {via:'cloud', user_id:null, remote_addr}: the edge treats it as remote, never local.
    const res = await relay(
      hook.edgeId,
      'POST',
      `/v1/automations/webhook/${encodeURIComponent(params.webhook_id)}`,
      body,
      null,
      c,
    );
    if (res.status === 200) return c.body(null, 200);
    if (res.status === 429) throw rateLimited(Number(header(res, 'retry-after')) || 1);
    passThrough(res);
    throw new HttpError(502, 'edge_error');
  });

  router.add(routes.automationCloudBootstrapRoute, async ({ auth, c }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const edgeList = (await s.edges.list(scope)).filter((e) => e.status !== 'revoked');
    // Full definitions live on the edges: an offline edge (or one that fails to answer) is skipped;
    // the mirror only has summaries, which a replica could not run.
    const perEdge = await Promise.all(
      edgeList.map(async (edge) => {
        if (!dir.reachable(edge.id, edge.status)) return [];
        try {
          const res = await relay(edge.id, 'GET', '/v1/automations', undefined, scope.userId, c);
          if (res.status !== 200 || !Array.isArray(res.body)) throw new Error(`edge answered ${res.status}`);
          return (res.body as unknown[]).flatMap((a) => {
            const parsed = Automation.safeParse(a);
            if (!parsed.success) {
              s.log.warn('cloud-bootstrap: skipped a malformed automation', { edgeId: edge.id });
              return [];
            }
            if (!parsed.data.enabled) return [];
            const full = { ...parsed.data, edge_id: edge.id };
            return [
              scope.kind === 'org' && scope.role === 'member' && edge.user_id !== scope.userId
                ? redactAutomationSecrets(full)
                : full,
            ];
          });
        } catch (err) {
          s.log.warn('cloud-bootstrap: edge skipped', { edgeId: edge.id, reason: (err as Error).message });
          return [];
        }
      }),
    );
    return { organization_id: scope.orgId, automations: perEdge.flat() };
  });
}

function header(res: RpcResult, name: string): string | undefined {
  for (const [k, v] of Object.entries(res.headers ?? {})) if (k.toLowerCase() === name) return v;
  return undefined;
}

/** The webhook body must be one JSON object (an empty body is not). */
function parseObject(bytes: Uint8Array): Record<string, unknown> {
  if (bytes.byteLength === 0) throw badRequest('body must be a JSON object');
  const value = parseJsonBody(bytes);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw badRequest('body must be a JSON object');
  return value as Record<string, unknown>;
}
