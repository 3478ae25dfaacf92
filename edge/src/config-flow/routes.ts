/** Local API routes for config flows and config entries (same paths and shapes as the cloud). */
import { edgeConfigFlowRoutes as R } from '@smarthome/protocol';
import type { SpecRouter } from '@smarthome/protocol/server';
import type { ConfigEntry } from '@smarthome/protocol';
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
  return { id: e.id, domain: e.domain, title: e.title, source: e.source, state: e.state, created_at: e.created_at, edge_id: e.edge_id ?? edgeId };
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
  router.add(R.listEntries, async () => {
    const edgeId = deps.edgeId?.() ?? null;
    return (await component.entries.list()).map((e) => toWireEntry(e, edgeId));
  });
  router.add(R.deleteEntry, async ({ params }) => {
    await component.entries.remove(Number(params.id));
    return { message: 'config entry removed' };
  });
}
