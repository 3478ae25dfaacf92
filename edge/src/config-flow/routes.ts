/** Local API routes for config flows and config entries (same paths and shapes as the cloud). */
import { edgeConfigFlowRoutes as R } from '@smarthome/protocol';
import { HttpError, type SpecRouter } from '@smarthome/protocol/server';
import type { ConfigEntry } from '@smarthome/protocol';
import type { ConfigFlowComponent } from './component.ts';
import type { StoredConfigEntry } from './ports.ts';

/** The portal page an OAuth sign-in returns to (web/src/integrations/oauth.ts: OAUTH_RETURN_PATH). */
export const OAUTH_RETURN_PATH = '/integrations/oauth';
/** The `?error=` the return page gets when the callback's state names no open flow (web/src/integrations/oauth.ts reads it). */
export const OAUTH_STATE_ERROR = 'unknown_state';

/** A 303 to the portal's return page (relative: the portal is served by this same edge, at whatever address the browser used). */
function toReturnPage(query: string): Response {
  return new Response(null, {
    status: 303,
    headers: {
      Location: `${OAUTH_RETURN_PATH}?${query}`,
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
    },
  });
}

export interface ConfigFlowRouteDeps<A = any> {
  component: ConfigFlowComponent;
  /**
   * Who owns a flow: when given, only the principal that started a flow may advance or
   * delete it (others get 404). Omit on a single-user edge.
   */
  ownerOf?: (auth: A) => string | undefined;
  /** the edge's id as known by the cloud, if paired (sets edge_id on config entries) */
  edgeId?: () => number | null;
}

/** The wire shape of an entry: never its data (credentials, tokens). */
export function toWireEntry(e: StoredConfigEntry, edgeId: number | null = null): ConfigEntry {
  return {
    id: e.id,
    domain: e.domain,
    title: e.title,
    source: e.source,
    state: e.state,
    created_at: e.created_at,
    edge_id: e.edge_id ?? edgeId,
  };
}

export function mountConfigFlowRoutes<A>(router: SpecRouter<A>, deps: ConfigFlowRouteDeps<A>): void {
  const { component } = deps;
  const owner = (auth: A) => deps.ownerOf?.(auth);

  router.add(R.listHandlers, () => component.flows.handlers());
  router.add(R.startFlow, ({ body, auth }) => component.flows.startFlow(body.handler, owner(auth)));
  router.add(R.advanceFlow, ({ params, body, auth }) => component.flows.advance(params.flowId, body, owner(auth)));
  router.add(R.deleteFlow, ({ params, auth }) => {
    component.flows.abort(params.flowId, owner(auth));
    return { message: 'flow aborted' };
  });
  router.add(R.getFlow, ({ params, auth }) => component.flows.get(params.flowId, owner(auth)));
  // The OAuth redirect target: no bearer token (a browser coming back from the provider);
  // the flow's unguessable state both names and authorizes it. A browser goes on to the
  // portal's return page (the one the cloud's redirect lands on), which shows the result.
  router.add(R.oauthCallback, async ({ c, query }) => {
    const { error_description: _ignored, ...input } = query;
    const accept = c.req.header('accept') ?? '';
    const json = accept.includes('application/json');
    let result;
    try {
      result = await component.flows.advanceByCallbackState(query.state, input);
    } catch (err) {
      // a browser shown a JSON 404 is stuck: it goes to the portal, which says to start again
      if (err instanceof HttpError && err.status === 404 && !json && accept.includes('text/html'))
        return toReturnPage(`error=${OAUTH_STATE_ERROR}`);
      throw err;
    }
    c.header('Cache-Control', 'no-store');
    c.header('Referrer-Policy', 'no-referrer');
    if (json) return result;
    return toReturnPage(`flow_id=${encodeURIComponent(result.flowId)}`);
  });
  router.add(R.listEntries, async () => {
    const edgeId = deps.edgeId?.() ?? null;
    return (await component.entries.list()).map((e) => toWireEntry(e, edgeId));
  });
  router.add(R.deleteEntry, async ({ params }) => {
    await component.entries.remove(Number(params.id));
    return { message: 'config entry removed' };
  });
}
