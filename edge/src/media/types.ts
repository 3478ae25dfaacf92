import type { MediaNode } from '@smarthome/protocol';

export interface BrowseContext {
  /** a signed URL for a playable item of this provider (used for cheap thumbnails) */
  signedUrl(segments: string[]): Promise<string>;
  /** entity id of the player the result is for (hint; may be ignored) */
  targetMediaPlayer?: string;
}

/** What a playable item resolves to. */
export type ResolvedItem =
  /** content the edge serves itself behind a signed URL */
  | { kind: 'edge'; mime_type: string; title: string; size?: number }
  /** content already reachable by URL (e.g. a cloud stream) */
  | { kind: 'url'; url: string; mime_type: string; title: string };

/** Bytes of one item, opened for serving; `close` must be called unless `stream` is consumed. */
export interface MediaContent {
  size: number;
  mime_type: string;
  mtimeMs: number;
  etag: string;
  /** bytes start..end (inclusive); the content closes itself when the stream ends or is cancelled */
  stream(start: number, end: number): ReadableStream<Uint8Array>;
  close(): Promise<void>;
}

export interface MediaProvider {
  /** `<provider>` of media-source://<provider>/… */
  readonly id: string;
  readonly title: string;
  start?(): Promise<void>;
  stop?(): Promise<void> | void;
  /** segments are already checked (no empty, `.`, `..`, slashes or NUL); unknown → throw notFound */
  browse(segments: string[], ctx: BrowseContext): Promise<MediaNode>;
  resolve(segments: string[]): Promise<ResolvedItem>;
  open(segments: string[]): Promise<MediaContent>;
}
