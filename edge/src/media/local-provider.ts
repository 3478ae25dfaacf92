/**
 * The local media folder. Every path is resolved with realpath and must stay inside the
 * folder's own realpath, so symlinks pointing out of it are invisible (404), whatever
 * the URI or token says. Files are opened with O_NOFOLLOW and checked to be the very
 * inode that was validated.
 */
import { constants, type Dirent, type Stats } from 'node:fs';
import { mkdir, open, readdir, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { Readable } from 'node:stream';
import type { MediaNode } from '@smarthome/protocol';
import { badRequest, notFound } from '@smarthome/protocol/server';
import { isPlayableClass, mediaClassFor, mimeTypeFor } from './mime.ts';
import type { BrowseContext, MediaContent, MediaProvider, ResolvedItem } from './types.ts';
import { buildMediaSourceUri, invalidPath, isSafeSegment } from './uri.ts';

export interface LocalMediaOptions {
  folder: string;
  id?: string;
  title?: string;
  /** children listed per folder (default 1000) */
  maxChildren?: number;
  /** create the folder on start when missing (default true) */
  create?: boolean;
}

interface Located {
  real: string;
  stats: Stats;
}

export class LocalMediaProvider implements MediaProvider {
  readonly id: string;
  readonly title: string;
  private readonly opts: LocalMediaOptions;
  private root: string | undefined;

  constructor(opts: LocalMediaOptions) {
    this.opts = opts;
    this.id = opts.id ?? 'local';
    this.title = opts.title ?? 'Local Media';
  }

  async start(): Promise<void> {
    if (this.opts.create ?? true) await mkdir(this.opts.folder, { recursive: true });
    this.root = await realpath(this.opts.folder);
  }

  private rootDir(): string {
    if (!this.root) throw new Error('LocalMediaProvider used before start()');
    return this.root;
  }

  private inside(real: string): boolean {
    const root = this.rootDir();
    return real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
  }

  /** realpath + containment check; anything missing or outside is "not found". */
  private async locate(segments: string[]): Promise<Located> {
    for (const s of segments) if (!isSafeSegment(s)) throw invalidPath();
    let real: string;
    try {
      real = await realpath(join(this.rootDir(), ...segments));
    } catch {
      throw notFound('media not found');
    }
    if (!this.inside(real)) throw notFound('media not found');
    const stats = await stat(real).catch(() => {
      throw notFound('media not found');
    });
    if (!stats.isFile() && !stats.isDirectory()) throw notFound('media not found');
    return { real, stats };
  }

  private fileNode(segments: string[], name: string, thumbnail: string | null): MediaNode {
    const mime = mimeTypeFor(name);
    const mediaClass = mediaClassFor(mime);
    return {
      title: name,
      media_class: mediaClass,
      media_content_type: mime,
      media_content_id: buildMediaSourceUri(this.id, segments),
      thumbnail,
      children_media_class: null,
      can_play: isPlayableClass(mediaClass),
      can_expand: false,
      children: [],
    };
  }

  private dirNode(segments: string[], title: string, children: MediaNode[] = []): MediaNode {
    const classes = new Set(children.map((c) => c.media_class));
    return {
      title,
      media_class: 'directory',
      media_content_type: '',
      media_content_id: buildMediaSourceUri(this.id, segments),
      thumbnail: null,
      children_media_class: classes.size === 1 ? [...classes][0] : children.length ? 'directory' : null,
      can_play: false,
      can_expand: true,
      children,
    };
  }

  /** Type of a directory entry, following symlinks only when they stay inside. */
  private async entryKind(dir: string, d: Dirent): Promise<'file' | 'dir' | null> {
    if (d.isFile()) return 'file';
    if (d.isDirectory()) return 'dir';
    if (!d.isSymbolicLink()) return null;
    try {
      const real = await realpath(join(dir, d.name));
      if (!this.inside(real)) return null;
      const s = await stat(real);
      return s.isFile() ? 'file' : s.isDirectory() ? 'dir' : null;
    } catch {
      return null;
    }
  }

  async browse(segments: string[], ctx: BrowseContext): Promise<MediaNode> {
    const { real, stats } = await this.locate(segments);
    const name = segments.at(-1) ?? this.title;
    if (stats.isFile()) {
      const node = this.fileNode(segments, name, null);
      if (node.media_class === 'image') node.thumbnail = await ctx.signedUrl(segments);
      return node;
    }
    const entries = (await readdir(real, { withFileTypes: true }))
      .filter((d) => !d.name.startsWith('.') && isSafeSegment(d.name))
      .sort((a, b) => a.name.localeCompare(b.name));
    const dirs: MediaNode[] = [];
    const files: MediaNode[] = [];
    const max = this.opts.maxChildren ?? 1000;
    for (const d of entries) {
      if (dirs.length + files.length >= max) break;
      const kind = await this.entryKind(real, d);
      const childSegments = [...segments, d.name];
      if (kind === 'dir') dirs.push(this.dirNode(childSegments, d.name));
      else if (kind === 'file') {
        const node = this.fileNode(childSegments, d.name, null);
        if (node.media_class === 'image') node.thumbnail = await ctx.signedUrl(childSegments);
        files.push(node);
      }
    }
    return this.dirNode(segments, segments.length ? name : this.title, [...dirs, ...files]);
  }

  async resolve(segments: string[]): Promise<ResolvedItem> {
    const { stats } = await this.locate(segments);
    if (!stats.isFile()) throw badRequest('not a playable media item');
    const name = segments.at(-1)!;
    return { kind: 'edge', mime_type: mimeTypeFor(name), title: name, size: stats.size };
  }

  async open(segments: string[]): Promise<MediaContent> {
    const { real, stats } = await this.locate(segments);
    if (!stats.isFile()) throw notFound('media not found');
    const fh = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => {
      throw notFound('media not found');
    });
    const fstats = await fh.stat();
    // The inode opened must be the one validated (no swap between check and open).
    if (!fstats.isFile() || fstats.ino !== stats.ino || fstats.dev !== stats.dev) {
      await fh.close();
      throw notFound('media not found');
    }
    let consumed = false;
    return {
      size: fstats.size,
      mime_type: mimeTypeFor(segments.at(-1)!),
      mtimeMs: fstats.mtimeMs,
      etag: `"${fstats.size.toString(16)}-${Math.floor(fstats.mtimeMs).toString(16)}"`,
      stream(start, end) {
        consumed = true;
        const rs = fh.createReadStream({ start, end, autoClose: true, highWaterMark: 64 * 1024 });
        return Readable.toWeb(rs) as unknown as ReadableStream<Uint8Array>;
      },
      async close() {
        if (!consumed) await fh.close().catch(() => {});
      },
    };
  }
}
