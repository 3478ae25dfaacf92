/**
 * The media source: providers behind media-source://<provider>/<path>, browse, resolve to
 * a signed URL, and opening the content a signed URL names.
 * constructor assigns only; start() prepares providers (e.g. the local folder's realpath).
 */
import { randomBytes } from 'node:crypto';
import { mediaRoot, type MediaNode, type ResolvedMedia } from '@smarthome/protocol';
import { badRequest, notFound } from '@smarthome/protocol/server';
import { silentLogger, type Logger } from '../log.ts';
import { MediaUrlSigner, DEFAULT_URL_TTL_SECONDS } from './signer.ts';
import type { MediaContent, MediaProvider } from './types.ts';
import { buildMediaSourceUri, parseMediaSourceUri } from './uri.ts';

/** Path of the signed content route; the full URL is `<base>/v1/media/<token>/<filename>`. */
export const SIGNED_MEDIA_PREFIX = '/v1/media/';

export interface MediaSourceDeps {
  providers: MediaProvider[];
  /** HS256 key for signed URLs (≥ 32 bytes); default: random per process (URLs die with it) */
  signingKey?: Uint8Array | string;
  /** lifetime of signed URLs (default 300 s) */
  urlTtlSeconds?: number;
  now?: () => number;
  log?: Logger;
}

export class MediaSourceComponent {
  readonly signer: MediaUrlSigner;
  private readonly providers = new Map<string, MediaProvider>();
  private readonly log: Logger;

  constructor(deps: MediaSourceDeps) {
    for (const p of deps.providers) {
      if (this.providers.has(p.id)) throw new Error(`media provider ${p.id} registered twice`);
      this.providers.set(p.id, p);
    }
    this.signer = new MediaUrlSigner(
      deps.signingKey ?? randomBytes(32),
      deps.urlTtlSeconds ?? DEFAULT_URL_TTL_SECONDS,
      deps.now,
    );
    this.log = deps.log ?? silentLogger;
  }

  async start(): Promise<void> {
    for (const p of this.providers.values()) await p.start?.();
  }

  async stop(): Promise<void> {
    for (const p of this.providers.values()) {
      try {
        await p.stop?.();
      } catch (err) {
        this.log.error(`media provider ${p.id} stop failed`, err);
      }
    }
  }

  private provider(id: string): MediaProvider {
    const p = this.providers.get(id);
    if (!p) throw notFound('unknown media provider');
    return p;
  }

  /** `<base>/v1/media/<token>/<filename>` for a provider item */
  async signedUrl(baseUrl: string, provider: string, segments: string[]): Promise<{ url: string; expiresAt: number }> {
    const { token, expiresAt } = await this.signer.sign({ provider, segments });
    const filename = encodeURIComponent(segments.at(-1) ?? provider);
    return { url: `${baseUrl.replace(/\/+$/, '')}${SIGNED_MEDIA_PREFIX}${token}/${filename}`, expiresAt };
  }

  async browse(uri: string | undefined, baseUrl: string, targetMediaPlayer?: string): Promise<MediaNode> {
    const loc = parseMediaSourceUri(uri ?? buildMediaSourceUri(null));
    if (loc.provider === null) return mediaRoot([...this.providers.values()]);
    const provider = this.provider(loc.provider);
    return provider.browse(loc.segments, {
      signedUrl: async (segments) => (await this.signedUrl(baseUrl, provider.id, segments)).url,
      targetMediaPlayer,
    });
  }

  async resolve(uri: string, baseUrl: string): Promise<ResolvedMedia> {
    const loc = parseMediaSourceUri(uri);
    if (loc.provider === null) throw badRequest('not a playable media item');
    const provider = this.provider(loc.provider);
    const item = await provider.resolve(loc.segments);
    if (item.kind === 'url') return { url: item.url, mime_type: item.mime_type, extra: { title: item.title } };
    const { url, expiresAt } = await this.signedUrl(baseUrl, provider.id, loc.segments);
    const extra: Record<string, unknown> = { title: item.title, expires_at: new Date(expiresAt).toISOString() };
    if (item.size !== undefined) extra.size = item.size;
    return { url, mime_type: item.mime_type, extra };
  }

  /** Opens what a signed URL names; 403 for a bad or expired token, 404 when it is gone. */
  async openSigned(token: string, filename: string): Promise<MediaContent> {
    const target = await this.signer.verify(token);
    if (filename !== (target.segments.at(-1) ?? target.provider)) throw notFound('media not found');
    return this.provider(target.provider).open(target.segments);
  }
}
