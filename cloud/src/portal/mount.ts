import type { Hono } from 'hono';
import { createPortal, type Portal, type PortalAssets } from '@smarthome/web/serve';

/**
 * The portal at `/` (web/dist) as the fallback of GET/HEAD outside the API paths: a route of the
 * server, even one added after this, answers first; what none answered (404) gets the page or
 * its file. API paths keep their JSON 404.
 */
export function mountPortal(app: Hono<any>, assets?: PortalAssets | null): Portal {
  const portal = createPortal('cloud', assets);
  app.use('*', async (c, next) => {
    await next();
    if (c.res.status !== 404) return;
    const res = portal.respond(c.req.raw);
    if (res) c.res = res;
  });
  return portal;
}
