import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { EntityState } from '@smarthome/protocol';
import type { MirrorStore } from './store.ts';

interface Entry {
  version: number;
  json: string;
}

const gzip = promisify(gzipCallback);

/** A rendered listing: its bytes, and the same gzip-compressed (made once, off the event loop, on first demand). */
export interface RenderedStates {
  etag: string;
  body: Uint8Array<ArrayBuffer>;
  gzipped(): Promise<Uint8Array<ArrayBuffer>>;
}

class Rendered implements RenderedStates {
  readonly etag: string;
  readonly body: Uint8Array<ArrayBuffer>;
  private compressed: Promise<Uint8Array<ArrayBuffer>> | null = null;
  constructor(etag: string, body: Uint8Array<ArrayBuffer>) {
    this.etag = etag;
    this.body = body;
  }
  gzipped(): Promise<Uint8Array<ArrayBuffer>> {
    this.compressed ??= gzip(this.body, { level: 6 }) as Promise<Uint8Array<ArrayBuffer>>;
    return this.compressed;
  }
}

const MAX_BODIES = 8;

/**
 * GET /v1/entities/states serialized per edge, kept while the edge's mirror version (bumped by
 * every mirror write, on whichever replica) is unchanged: a read costs one small query for the
 * versions plus string concatenation instead of reading, parsing and serializing every row.
 * Bounded by total size; the least recently used edges go first.
 */
export class StatesCache {
  private readonly mirror: MirrorStore;
  private readonly maxBytes: number;
  private readonly entries = new Map<number, Entry>();
  /** whole encoded responses by ETag (oldest first) */
  private readonly bodies = new Map<string, Rendered>();
  private bytes = 0;

  constructor(mirror: MirrorStore, maxBytes = 64 * 1024 * 1024) {
    this.mirror = mirror;
    this.maxBytes = maxBytes;
  }

  /**
   * The JSON array (UTF-8) of the states of `wholeEdges` (every entity, in edge then entity_id
   * order) followed by the `shared` entities of other edges, and an ETag naming exactly that
   * content: the edges, their versions and the shared entities. Recent bodies are kept by ETag,
   * so callers who see the same things share one encoded body.
   */
  async render(
    wholeEdges: number[],
    shared: { edgeId: number; entityId: string }[],
    sharedStates: () => Promise<EntityState[]>,
  ): Promise<RenderedStates> {
    const edges = [...wholeEdges].sort((a, b) => a - b);
    // Versions are read before rows: a row newer than its version only makes the next read refresh.
    const versions = await this.mirror.versions([...new Set([...edges, ...shared.map((g) => g.edgeId)])]);
    const etag = `W/"${createHash('sha256')
      .update(JSON.stringify([edges, [...versions], shared.map((g) => [g.edgeId, g.entityId])]))
      .digest('base64url')
      .slice(0, 27)}"`;
    const known = this.bodies.get(etag);
    if (known) return known;
    const parts: string[] = [];
    for (const edgeId of edges) {
      const json = await this.edgeJson(edgeId, versions.get(edgeId) ?? 0);
      if (json) parts.push(json);
    }
    for (const s of await sharedStates()) parts.push(JSON.stringify(EntityState.parse(s)));
    const rendered = new Rendered(etag, Buffer.from(`[${parts.join(',')}]`));
    if (this.bodies.size >= MAX_BODIES) this.bodies.delete(this.bodies.keys().next().value!);
    if (rendered.body.length <= this.maxBytes / MAX_BODIES) this.bodies.set(etag, rendered);
    return rendered;
  }

  private async edgeJson(edgeId: number, version: number): Promise<string> {
    const hit = this.entries.get(edgeId);
    if (hit && hit.version === version) {
      this.entries.delete(edgeId);
      this.entries.set(edgeId, hit);
      return hit.json;
    }
    const states = await this.mirror.states([edgeId]);
    const json = states.map((s) => JSON.stringify(EntityState.parse(s))).join(',');
    this.store(edgeId, { version, json });
    return json;
  }

  private store(edgeId: number, entry: Entry): void {
    const old = this.entries.get(edgeId);
    if (old) {
      this.bytes -= old.json.length;
      this.entries.delete(edgeId);
    }
    if (entry.json.length > this.maxBytes) return;
    this.entries.set(edgeId, entry);
    this.bytes += entry.json.length;
    for (const [id, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(id);
      this.bytes -= e.json.length;
    }
  }
}
