import { z } from 'zod';
import { JsonObject } from './common.ts';

export const MediaSourceUri = z.string().max(2048).startsWith('media-source://', 'uri must start with media-source://');

export type MediaNode = {
  title: string;
  media_class: string;
  media_content_type: string;
  media_content_id: string;
  thumbnail: string | null;
  children_media_class: string | null;
  can_play: boolean;
  can_expand: boolean;
  children: MediaNode[];
};
export const MediaNode: z.ZodType<MediaNode> = z
  .object({
    title: z.string(),
    media_class: z.string(),
    media_content_type: z.string(),
    media_content_id: z.string(),
    thumbnail: z.string().nullable(),
    children_media_class: z.string().nullable(),
    can_play: z.boolean(),
    can_expand: z.boolean(),
    get children() {
      return z.array(MediaNode);
    },
  })
  .meta({ id: 'MediaNode' });

/** The URI of the root listing. */
export const MEDIA_SOURCE_ROOT = 'media-source://';

/** The root listing: one directory node per media provider. */
export function mediaRoot(providers: { id: string; title: string }[]): MediaNode {
  return {
    title: 'Media Sources',
    media_class: 'directory',
    media_content_type: '',
    media_content_id: MEDIA_SOURCE_ROOT,
    thumbnail: null,
    children_media_class: 'directory',
    can_play: false,
    can_expand: true,
    children: providers.map((p) => ({
      title: p.title,
      media_class: 'directory',
      media_content_type: '',
      media_content_id: `${MEDIA_SOURCE_ROOT}${p.id}`,
      thumbnail: null,
      children_media_class: null,
      can_play: false,
      can_expand: true,
      children: [],
    })),
  };
}

export const BrowseQuery = z.object({
  uri: MediaSourceUri.optional(),
  target_media_player: z.string().max(255).optional(),
  edge_id: z
    .string()
    .regex(/^[0-9]+$/)
    .optional(),
});
export const ResolveBody = z
  .object({
    uri: MediaSourceUri,
    target_media_player: z.string().max(255).optional(),
    edge_id: z.number().int().positive().optional(),
  })
  .meta({ id: 'ResolveMedia' });
export const ResolvedMedia = z
  .object({ url: z.string(), mime_type: z.string(), extra: JsonObject })
  .meta({ id: 'ResolvedMedia' });
export type ResolvedMedia = z.infer<typeof ResolvedMedia>;
