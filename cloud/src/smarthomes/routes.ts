import { routes } from '@smarthome/protocol';
import { badRequest } from '@smarthome/protocol/server';
import type { CloudRouter } from '../context.ts';
import type { CloudDatabase } from '../db/database.ts';
import type { EdgeRegistry } from '../edges/registry.ts';
import type { MirrorStore } from '../mirror/store.ts';
import { userOf } from '../http/route-inputs.ts';
import { resolveScope } from '../orgs/scope.ts';

/** Opaque cursor: base64url of "e:<last edge id>". */
export function encodeCursor(lastId: number): string {
  return Buffer.from(`e:${lastId}`).toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const m = /^e:([0-9]{1,15})$/.exec(text);
  if (!m) throw badRequest('cursor: invalid cursor');
  return Number(m[1]);
}

/** GET /v2/smarthomes: one item per edge of the scope, ordered by id, with mirrored counts. */
export interface SmartHomeRoutesDeps {
  database: CloudDatabase;
  edges: EdgeRegistry;
  mirror: MirrorStore;
}

export function mountSmartHomeRoutes(router: CloudRouter, s: SmartHomeRoutesDeps): void {
  router.add(routes.smartHomesRoute, async ({ auth, c, query }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const after = query.cursor ? decodeCursor(query.cursor) : 0;
    // One extra row tells whether another page follows.
    const rows = await s.edges.page(scope, after, query.limit + 1);
    const page = rows.slice(0, query.limit);
    const counts = await s.mirror.countsByEdge(page.map((e) => e.id));
    return {
      items: page.map((e) => ({
        id: e.id,
        name: e.name,
        org_id: e.org_id,
        location: e.location,
        status: e.status,
        devices: counts.get(e.id)?.devices ?? 0,
        entities: counts.get(e.id)?.entities ?? 0,
      })),
      next_cursor: rows.length > query.limit ? encodeCursor(page[page.length - 1].id) : null,
    };
  });
}
