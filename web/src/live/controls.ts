import { useEffect, useState } from 'preact/hooks';
import { ServiceCallResult } from '@smarthome/protocol/devices';
import { ApiError, api, describe } from '../api/http.ts';
import type { LiveStates } from './states.ts';

/**
 * Service calls from the controls, with what they taught us: the last failure per entity
 * (shown next to it) and the entities the caller may view but not control (a 403: their
 * controls are disabled from then on).
 */
export class Controls {
  readonly errors = new Map<string, string>();
  readonly viewOnly = new Set<string>();
  readonly pending = new Set<string>();
  private readonly live: LiveStates;
  private readonly listeners = new Set<() => void>();

  constructor(live: LiveStates) {
    this.live = live;
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  async call(entityId: string, service: string, data: Record<string, unknown> = {}): Promise<void> {
    const domain = entityId.split('.')[0];
    this.pending.add(entityId);
    this.errors.delete(entityId);
    this.changed();
    try {
      const result = await api('POST', `/v1/services/${domain}/${service}`, {
        body: { entity_id: entityId, ...data },
        schema: ServiceCallResult,
      });
      this.live.apply(result.changed_states);
    } catch (err) {
      const refused = err instanceof ApiError && err.status === 403;
      if (refused) this.viewOnly.add(entityId);
      // the API's 403 says what was refused; on a control it means the share is view-only
      this.errors.set(
        entityId,
        refused ? describe(err).replace(/\.$/, ': you can view this but not control it.') : describe(err),
      );
    } finally {
      this.pending.delete(entityId);
      this.changed();
    }
  }
}

export function useControls(controls: Controls): Controls {
  const [, setTick] = useState(0);
  useEffect(() => controls.subscribe(() => setTick((t) => t + 1)), [controls]);
  return controls;
}
