import type { Hono } from 'hono';
import { createPortal, type Portal, type PortalAssets } from '@smarthome/web/serve';

/**
 * The portal at `/` (web/dist): GET/HEAD outside the API paths get the page or its files;
 * everything else falls through to the routes (and their JSON 404).
 */
export function mountPortal(app: Hono<any>, assets?: PortalAssets | null): Portal {
  const portal = createPortal('edge', assets);
  app.use('*', async (c, next) => {
    const res = portal.respond(c.req.raw);
    if (res) return res;
    await next();
  });
  return portal;
}
