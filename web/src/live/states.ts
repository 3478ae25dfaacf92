import { useEffect, useState } from 'preact/hooks';

/**
 * Live entity states over the realtime API, Home Assistant style: the cloud's app WebSocket
 * (/v1/websocket) or the edge's /api/websocket speak the same messages (auth, get_states,
 * subscribe_events state_changed). Reconnects with a back-off; changes are delivered at most
 * once per animation frame, so a burst of updates costs one render.
 */

export interface LiveState {
  entity_id: string;
  state: string | null;
  attributes: Record<string, unknown>;
  name?: string;
  last_changed?: string | null;
}

export type LiveStatus = 'connecting' | 'live' | 'offline';

export class LiveStates {
  readonly states = new Map<string, LiveState>();
  status: LiveStatus = 'connecting';
  private readonly url: string;
  private readonly token: () => string | null;
  private readonly listeners = new Set<() => void>();
  private socket: WebSocket | null = null;
  private stopped = false;
  private retryMs = 500;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private scheduled = false;

  constructor(url: string, token: () => string | null) {
    this.url = url;
    this.token = token;
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.socket?.close();
    this.socket = null;
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  /** States a service call answered with: shown at once, before the event arrives. */
  apply(states: LiveState[]): void {
    for (const s of states) this.states.set(s.entity_id, s);
    this.changed();
  }

  private changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      for (const l of this.listeners) l();
    });
  }

  private connect(): void {
    const token = this.token();
    if (this.stopped || !token) return;
    const ws = new WebSocket(this.url);
    this.socket = ws;
    ws.onmessage = (e) => {
      let msg: any;
      try {
        msg = JSON.parse(String(e.data));
      } catch {
        return;
      }
      if (msg.type === 'auth_required') ws.send(JSON.stringify({ type: 'auth', access_token: token }));
      else if (msg.type === 'auth_ok') {
        this.retryMs = 500;
        ws.send(JSON.stringify({ id: 1, type: 'subscribe_events', event_type: 'state_changed' }));
        ws.send(JSON.stringify({ id: 2, type: 'get_states' }));
      } else if (msg.type === 'auth_invalid') {
        this.status = 'offline';
        this.changed();
        ws.close();
      } else if (msg.type === 'result' && msg.id === 2 && msg.success && Array.isArray(msg.result)) {
        this.states.clear();
        for (const s of msg.result as LiveState[]) this.states.set(s.entity_id, s);
        this.status = 'live';
        this.changed();
      } else if (msg.type === 'event' && msg.event?.event_type === 'state_changed') {
        const { entity_id: id, new_state: next } = msg.event.data as { entity_id: string; new_state: LiveState | null };
        if (next) this.states.set(id, next);
        else this.states.delete(id);
        this.changed();
      }
    };
    ws.onclose = () => {
      if (this.socket !== ws) return;
      this.socket = null;
      this.status = 'offline';
      this.changed();
      if (this.stopped) return;
      this.timer = setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 15_000);
    };
  }
}

/** Re-renders the caller whenever the live states change. */
export function useLive(live: LiveStates): LiveStates {
  const [, setTick] = useState(0);
  useEffect(() => live.subscribe(() => setTick((t) => t + 1)), [live]);
  return live;
}

export function displayName(s: LiveState): string {
  const friendly = s.attributes.friendly_name;
  return typeof friendly === 'string' && friendly ? friendly : s.name || s.entity_id;
}

export const domainOf = (entityId: string) => entityId.split('.')[0] ?? '';
