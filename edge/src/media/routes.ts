/**
 * Local API routes of the media source (same paths and shapes as the cloud) and the
 * signed content route `GET /v1/media/{token}/{filename}` (no bearer: the token is the
 * credential) with single-range HTTP Range support.
 */
import type { Context } from 'hono';
import { edgeMediaRoutes as R } from '@smarthome/protocol';
import { HttpError, type SpecRouter } from '@smarthome/protocol/server';
import type { MediaSourceComponent } from './component.ts';
import { parseRange } from './range.ts';

export interface MediaRouteDeps {
  component: MediaSourceComponent;
  /**
   * Origin put in front of signed URLs (what the media player can reach), e.g.
   * "http://192.168.1.20:8123". Default: the origin of the request being answered.
   */
  publicBaseUrl?: (c: Context) => string;
}

function requestOrigin(c: Context): string {
  return new URL(c.req.url).origin;
}

export function mountMediaRoutes<A>(router: SpecRouter<A>, deps: MediaRouteDeps): void {
  const { component } = deps;
  const base = deps.publicBaseUrl ?? requestOrigin;

  router.add(R.browse, ({ c, query }) => component.browse(query.uri, base(c), query.target_media_player));
  router.add(R.resolve, ({ c, body }) => component.resolve(body.uri, base(c)));

  router.add(R.signedMedia, async ({ c, params }) => {
    const content = await component.openSigned(params.token, params.filename);
    const headers = new Headers({
      'Accept-Ranges': 'bytes',
      'Content-Type': content.mime_type,
      ETag: content.etag,
      'Last-Modified': new Date(content.mtimeMs).toUTCString(),
      'Cache-Control': 'private, max-age=300',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    });
    const ifRange = c.req.header('if-range');
    const rangeHeader =
      ifRange && ifRange !== content.etag && ifRange !== headers.get('Last-Modified')
        ? undefined
        : c.req.header('range');
    const range = parseRange(rangeHeader, content.size);
    if (range.kind === 'unsatisfiable') {
      await content.close();
      throw new HttpError(416, 'range_not_satisfiable', {
        headers: { 'Content-Range': `bytes */${content.size}`, 'Accept-Ranges': 'bytes' },
      });
    }
    const [start, end, status] = range.kind === 'partial' ? [range.start, range.end, 206] : [0, content.size - 1, 200];
    if (status === 206) headers.set('Content-Range', `bytes ${start}-${end}/${content.size}`);
    const length = content.size === 0 ? 0 : end - start + 1;
    headers.set('Content-Length', String(length));
    if (c.req.method === 'HEAD' || length === 0) {
      await content.close();
      return new Response(null, { status, headers });
    }
    return new Response(content.stream(start, end), { status, headers });
  });
}
