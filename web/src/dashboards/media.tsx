import { useRef, useState } from 'preact/hooks';
import { EntityState } from '@smarthome/protocol/devices';
import { MEDIA_SOURCE_ROOT, MediaNode, ResolvedMedia } from '@smarthome/protocol/media';
import { api, describe } from '../api/http.ts';
import { useApp } from '../app/context.ts';
import { useControls } from '../live/controls.ts';
import { displayName, useLive } from '../live/states.ts';
import type { Card } from './card.ts';
import { Alert } from '../app/Alert.tsx';

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** Artwork the page's CSP lets it show (same origin, https: or data:). */
const artwork = (v: unknown): string | null => {
  const url = text(v);
  return url && (url.startsWith('/') || url.startsWith('https:') || url.startsWith('data:')) ? url : null;
};

/**
 * The browse panel: media-source nodes from `GET /v1/media-source/browse`, a path of the
 * nodes opened (to go back up), and for a playable node the resolve + play_media the card does.
 */
function Browser(props: {
  player: string;
  name: string;
  edgeOf: () => Promise<number | null>;
  onPlay: (node: MediaNode) => Promise<void>;
}) {
  const [path, setPath] = useState<MediaNode[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const open = async (uri: string, depth: number) => {
    setBusy(true);
    setError(null);
    try {
      const qs = new URLSearchParams({ uri, target_media_player: props.player });
      const edge = await props.edgeOf();
      if (edge !== null) qs.set('edge_id', String(edge));
      const node = await api('GET', `/v1/media-source/browse?${qs}`, { schema: MediaNode });
      setPath([...path.slice(0, depth), node]);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  const here = path[path.length - 1];
  if (!here)
    return (
      <div class="media-browser">
        <button type="button" disabled={busy} onClick={() => void open(MEDIA_SOURCE_ROOT, 0)}>
          Browse media for {props.name}
        </button>
        <Alert message={error} />
      </div>
    );
  return (
    <div class="media-browser" aria-busy={busy}>
      <nav aria-label={`Media path for ${props.name}`} class="media-path">
        {path.map((n, i) =>
          i === path.length - 1 ? (
            <span key={n.media_content_id} aria-current="location">
              {n.title}
            </span>
          ) : (
            <span key={n.media_content_id}>
              <button type="button" class="secondary" onClick={() => setPath(path.slice(0, i + 1))}>
                {n.title}
              </button>{' '}
              ›{' '}
            </span>
          ),
        )}
      </nav>
      {here.children.length === 0 && <p class="note">Nothing here.</p>}
      <ul class="rows media-items">
        {here.children.map((c) => (
          <li key={c.media_content_id} data-media={c.media_content_id}>
            <span class="entity-name">{c.title}</span>
            <span class="note">{c.media_class}</span>
            {c.can_expand && (
              <button
                type="button"
                class="secondary"
                disabled={busy}
                onClick={() => void open(c.media_content_id, path.length)}
              >
                Open <span class="visually-hidden">{c.title}</span>
              </button>
            )}
            {c.can_play && (
              <button
                type="button"
                disabled={busy}
                onClick={async () => {
                  setBusy(true);
                  await props.onPlay(c).finally(() => setBusy(false));
                }}
              >
                Play <span class="visually-hidden">{c.title}</span>
              </button>
            )}
          </li>
        ))}
      </ul>
      <button type="button" class="secondary" onClick={() => setPath([])}>
        Close browser
      </button>
      <Alert message={error} />
    </div>
  );
}

/**
 * A media player: state, title/artist/artwork, play/pause, next, volume (media_player services),
 * and a media browser whose playable items are resolved (`POST /v1/media-source/resolve`)
 * and sent to the player with play_media.
 */
export function MediaControlCard({ card }: { card: Card }) {
  const { kind, live, controls } = useApp();
  useLive(live);
  useControls(controls);
  const [error, setError] = useState<string | null>(null);
  const edge = useRef<number | null | undefined>(typeof card.edge_id === 'number' ? card.edge_id : undefined);
  const id = typeof card.entity === 'string' ? card.entity : '';
  const s = live.states.get(id);
  const a = s?.attributes ?? {};
  const name = typeof card.name === 'string' ? card.name : s ? displayName(s) : id;
  const title = text(a.media_title);
  const artist = text(a.media_artist) ?? text(a.media_album_artist);
  const art = artwork(a.entity_picture);
  const volume = typeof a.volume_level === 'number' ? Math.round(a.volume_level * 100) : null;
  const playing = s?.state === 'playing';
  const disabled = !s || controls.viewOnly.has(id) || controls.pending.has(id) || s.state === 'unavailable';
  const failure = error ?? controls.errors.get(id);

  /** On the cloud the player's own edge is asked (a scope may hold several homes); the card's edge_id wins. */
  const edgeOf = async (): Promise<number | null> => {
    if (kind !== 'cloud') return null;
    if (edge.current === undefined) {
      const st = await api('GET', `/v1/entities/states/${encodeURIComponent(id)}`, { schema: EntityState });
      edge.current = st.edge_id ?? null;
    }
    return edge.current;
  };
  const play = async (node: MediaNode) => {
    setError(null);
    try {
      const edgeId = await edgeOf();
      const resolved = await api('POST', '/v1/media-source/resolve', {
        body: {
          uri: node.media_content_id,
          target_media_player: id,
          ...(edgeId !== null ? { edge_id: edgeId } : {}),
        },
        schema: ResolvedMedia,
      });
      await controls.call(id, 'play_media', {
        media_content_id: resolved.url,
        media_content_type: resolved.mime_type,
      });
    } catch (err) {
      setError(describe(err));
    }
  };

  return (
    <section class="card media-control" data-entity={id}>
      <h2>{name}</h2>
      <div class="media-now">
        {art && <img src={art} alt="" width={96} height={96} />}
        <div>
          <p class="value" aria-live="polite">
            <span class="media-state">{s?.state ?? 'unknown'}</span>
          </p>
          {title && <p class="media-title">{title}</p>}
          {artist && <p class="note media-artist">{artist}</p>}
        </div>
      </div>
      <div class="actions">
        <button
          type="button"
          disabled={disabled}
          aria-label={`${playing ? 'Pause' : 'Play'} ${name}`}
          onClick={() => void controls.call(id, playing ? 'media_pause' : 'media_play')}
        >
          {playing ? 'Pause' : 'Play'}
        </button>
        <button
          type="button"
          disabled={disabled}
          aria-label={`Next track on ${name}`}
          onClick={() => void controls.call(id, 'media_next_track')}
        >
          Next
        </button>
      </div>
      {volume !== null && (
        <label>
          Volume of {name}
          <input
            type="range"
            min={0}
            max={100}
            step={5}
            value={volume}
            disabled={disabled}
            onChange={(e) =>
              void controls.call(id, 'volume_set', {
                volume_level: Number((e.currentTarget as HTMLInputElement).value) / 100,
              })
            }
          />
        </label>
      )}
      <Browser player={id} name={name} edgeOf={edgeOf} onPlay={play} />
      {controls.viewOnly.has(id) && <p class="note">View only: you cannot control this.</p>}
      {!s && <p class="note">No state yet (unknown entity, or its home is offline).</p>}
      <Alert message={failure} />
    </section>
  );
}
