/**
 * The demo media provider: a couple of generated tones (WAV) and an SVG image, held in
 * memory and served by the edge like local files (signed URL, Range).
 */
import type { MediaNode } from '@smarthome/protocol';
import { badRequest, notFound } from '@smarthome/protocol/server';
import { isPlayableClass, mediaClassFor } from './mime.ts';
import type { BrowseContext, MediaContent, MediaProvider, ResolvedItem } from './types.ts';
import { buildMediaSourceUri } from './uri.ts';

/** 16-bit mono PCM WAV with a sine tone. */
export function sineWav(frequency: number, seconds: number, sampleRate = 8000): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const buf = Buffer.alloc(44 + samples * 2);
  buf.write('RIFF', 0, 'ascii');
  buf.writeUInt32LE(36 + samples * 2, 4);
  buf.write('WAVE', 8, 'ascii');
  buf.write('fmt ', 12, 'ascii');
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(1, 22); // mono
  buf.writeUInt32LE(sampleRate, 24);
  buf.writeUInt32LE(sampleRate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36, 'ascii');
  buf.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) {
    const fade = Math.min(1, i / 400, (samples - i) / 400);
    buf.writeInt16LE(Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 12000 * fade), 44 + i * 2);
  }
  return buf;
}

const SUNRISE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="180" viewBox="0 0 320 180">
<rect width="320" height="180" fill="#1e3a5f"/><circle cx="160" cy="150" r="60" fill="#f9a825"/>
<rect y="150" width="320" height="30" fill="#2e7d32"/></svg>
`;

interface DemoItem {
  name: string;
  title: string;
  mime: string;
  make: () => Buffer;
}
interface DemoFolder {
  name: string;
  title: string;
  items: DemoItem[];
}

const FOLDERS: DemoFolder[] = [
  {
    name: 'tones',
    title: 'Tones',
    items: [
      { name: 'a4-440hz.wav', title: 'A4 (440 Hz)', mime: 'audio/wav', make: () => sineWav(440, 1) },
      { name: 'c5-523hz.wav', title: 'C5 (523 Hz)', mime: 'audio/wav', make: () => sineWav(523.25, 1) },
    ],
  },
  {
    name: 'images',
    title: 'Images',
    items: [{ name: 'sunrise.svg', title: 'Sunrise', mime: 'image/svg+xml', make: () => Buffer.from(SUNRISE_SVG) }],
  },
];

export function bufferContent(data: Buffer, mime: string, mtimeMs = 0): MediaContent {
  return {
    size: data.length,
    mime_type: mime,
    mtimeMs,
    etag: `"demo-${data.length.toString(16)}"`,
    stream(start, end) {
      const slice = data.subarray(start, end + 1);
      return new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(slice));
          controller.close();
        },
      });
    },
    async close() {},
  };
}

export class DemoMediaProvider implements MediaProvider {
  readonly id = 'demo';
  readonly title = 'Demo Media';
  private readonly cache = new Map<string, Buffer>();
  private readonly startedAt = Date.now();

  private find(segments: string[]): { folder?: DemoFolder; item?: DemoItem } {
    if (segments.length === 0) return {};
    const folder = FOLDERS.find((f) => f.name === segments[0]);
    if (!folder || segments.length > 2) throw notFound('media not found');
    if (segments.length === 1) return { folder };
    const item = folder.items.find((i) => i.name === segments[1]);
    if (!item) throw notFound('media not found');
    return { folder, item };
  }

  private async itemNode(folder: DemoFolder, item: DemoItem, ctx: BrowseContext): Promise<MediaNode> {
    const mediaClass = mediaClassFor(item.mime);
    return {
      title: item.title,
      media_class: mediaClass,
      media_content_type: item.mime,
      media_content_id: buildMediaSourceUri(this.id, [folder.name, item.name]),
      thumbnail: mediaClass === 'image' ? await ctx.signedUrl([folder.name, item.name]) : null,
      children_media_class: null,
      can_play: isPlayableClass(mediaClass),
      can_expand: false,
      children: [],
    };
  }

  private folderNode(folder: DemoFolder, children: MediaNode[] = []): MediaNode {
    const classes = new Set(folder.items.map((i) => mediaClassFor(i.mime)));
    return {
      title: folder.title,
      media_class: 'directory',
      media_content_type: '',
      media_content_id: buildMediaSourceUri(this.id, [folder.name]),
      thumbnail: null,
      children_media_class: classes.size === 1 ? [...classes][0] : 'directory',
      can_play: false,
      can_expand: true,
      children,
    };
  }

  async browse(segments: string[], ctx: BrowseContext): Promise<MediaNode> {
    const { folder, item } = this.find(segments);
    if (folder && item) return this.itemNode(folder, item, ctx);
    if (folder)
      return this.folderNode(folder, await Promise.all(folder.items.map((i) => this.itemNode(folder, i, ctx))));
    return {
      title: this.title,
      media_class: 'directory',
      media_content_type: '',
      media_content_id: buildMediaSourceUri(this.id),
      thumbnail: null,
      children_media_class: 'directory',
      can_play: false,
      can_expand: true,
      children: FOLDERS.map((f) => this.folderNode(f)),
    };
  }

  async resolve(segments: string[]): Promise<ResolvedItem> {
    const { item } = this.find(segments);
    if (!item) throw badRequest('not a playable media item');
    return { kind: 'edge', mime_type: item.mime, title: item.title, size: this.bytes(segments[0], item).length };
  }

  async open(segments: string[]): Promise<MediaContent> {
    const { item } = this.find(segments);
    if (!item) throw notFound('media not found');
    return bufferContent(this.bytes(segments[0], item), item.mime, this.startedAt);
  }

  private bytes(folder: string, item: DemoItem): Buffer {
    const key = `${folder}/${item.name}`;
    let data = this.cache.get(key);
    if (!data) {
      data = item.make();
      this.cache.set(key, data);
    }
    return data;
  }
}
