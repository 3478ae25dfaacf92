/** Local API routes for config flows and config entries (same paths and shapes as the cloud). */
import { edgeConfigFlowRoutes as R } from '@smarthome/protocol';
import type { SpecRouter } from '@smarthome/protocol/server';
import type { ConfigEntry, ConfigFlowResult } from '@smarthome/protocol';
import type { ConfigFlowComponent } from './component.ts';
import type { StoredConfigEntry } from './ports.ts';

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
  // The OAuth redirect target: no bearer token (a browser coming back from the provider);
  // the flow's unguessable state both names and authorizes it.
  router.add(R.oauthCallback, async ({ c, query }) => {
    const { error_description: _ignored, ...input } = query;
    const result = await component.flows.advanceByCallbackState(query.state, input);
    c.header('Cache-Control', 'no-store');
    c.header('Referrer-Policy', 'no-referrer');
    if ((c.req.header('accept') ?? '').includes('application/json')) return result;
    return new Response(callbackPage(result), {
      status: 200,
      headers: {
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': 'no-store',
        'Referrer-Policy': 'no-referrer',
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      },
    });
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

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The page a browser sees after the provider's redirect. */
export function callbackPage(result: ConfigFlowResult): string {
  let heading: string;
  let text: string;
  if (result.type === 'create_entry') {
    heading = 'Setup complete';
    text = `${result.title} was added.`;
  } else if (result.type === 'abort') {
    heading = 'Setup failed';
    text = `The setup ended (${result.reason}).`;
  } else {
    heading = 'Setup not finished';
    text = `The answer was incomplete (${
      Object.entries(result.errors)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ') || 'no details'
    }). Go back to the app to continue.`;
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(heading)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;text-align:center}</style>
</head><body><h1>${escapeHtml(heading)}</h1><p>${escapeHtml(text)}</p><p>You can close this window.</p></body></html>
`;
}
