import { MEDIA_URI } from './world.ts';
import { EVERYONE, NOT_M, type Entry } from './types.ts';

/** Matrix entries of edge media (browse, resolve, signed paths), and the app-store webhook that stood among them. */

export const EDGE_MEDIA_ENTRIES: Record<string, Entry> = {
  // reads: nothing to snapshot
  'GET /v1/media-source/browse': {
    probes: (x) => [
      {
        what: "A's edge",
        path: `/v1/media-source/browse?edge_id=${x.w.edges.A.id}`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: async () => null,
      },
      {
        what: "O's edge",
        path: `/v1/media-source/browse?edge_id=${x.w.edges.O.id}&uri=${encodeURIComponent('media-source://demo')}`,
        deny: ['foreign'],
        allow: ['A@O', 'M@O'],
        snapshot: async () => null,
      },
    ],
  },
  'POST /v1/media-source/resolve': {
    probes: (x) => [
      {
        what: "A's edge",
        path: '/v1/media-source/resolve',
        body: { uri: MEDIA_URI, edge_id: x.w.edges.A.id },
        deny: EVERYONE,
        snapshot: async () => null,
      },
      {
        what: "O's edge",
        path: '/v1/media-source/resolve',
        body: { uri: MEDIA_URI, edge_id: x.w.edges.O.id },
        deny: ['foreign'],
        snapshot: async () => null,
      },
      {
        what: "M's edge",
        path: '/v1/media-source/resolve',
        body: { uri: MEDIA_URI, edge_id: x.w.m.edge },
        deny: NOT_M,
        snapshot: async () => null,
      },
      {
        what: "O's edge made by X",
        path: '/v1/media-source/resolve',
        body: { uri: MEDIA_URI, edge_id: x.w.xMadeForO.edge },
        deny: ['foreign'],
        snapshot: async () => null,
      },
    ],
  },
  'GET /v1/edges/{id}/media/{token}/{filename}': {
    // no Authorization: the edge's signature is. O's edge signed this path; A's edge must not honour it.
    probes: (x) => [
      {
        what: "O's signed media on A's edge",
        path: `/v1/edges/${x.w.edges.A.id}/media/${x.w.o.media.token}/${x.w.o.media.file}`,
        deny: ['foreign'],
        noneMay: "a signature of O's edge is never valid on A's edge",
        snapshot: async () => null,
      },
    ],
  },
  'POST /v1/webhooks/store-iap': {
    exempt: 'public',
    reason: 'app-store notifications: the JWS signature inside is the authorization (cloud/src/store-iap)',
  },
};
