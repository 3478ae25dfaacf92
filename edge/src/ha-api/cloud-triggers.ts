import type { tunnel } from '@smarthome/protocol';
import type { HaTriggerEvent } from '@smarthome/protocol/ha/index';
import type { Unsubscribe } from '@smarthome/protocol/server/ha/index';
import type { HaScripts } from './scripts.ts';

type Send = (msg: tunnel.TriggerMessage) => void;

/**
 * The subscribe_trigger subscriptions the cloud made on this edge (relay ops subscribe_trigger /
 * unsubscribe_trigger), armed on the automation engine like the edge's own socket's. Each fire
 * goes to the cloud as a tunnel `trigger` message under the cloud's subscription id.
 *
 * They live as long as the tunnel connection they were made on: when it closes, clear() disarms
 * them all (the cloud cannot tell us about sockets that closed meanwhile), and the cloud makes
 * them again once the edge is back.
 */
export class CloudTriggers {
  private readonly scripts: HaScripts;
  private readonly armed = new Map<string, Unsubscribe>();
  private send: Send | null = null;

  constructor(deps: { scripts: HaScripts }) {
    this.scripts = deps.scripts;
  }

  /** The tunnel's sender (the link sets it when it starts; null while the edge has no tunnel). */
  useSender(send: Send | null): void {
    this.send = send;
  }

  /** Arms (or re-arms, the same id replacing) a subscription; HaCommandError('invalid_format') for a bad trigger. */
  subscribe(id: string, trigger: unknown, variables: Record<string, unknown>): void {
    const unsubscribe = this.scripts.subscribeTrigger(trigger, variables, (event: HaTriggerEvent) =>
      this.send?.({ type: 'trigger', subscription: id, variables: event.variables, context: event.context }),
    );
    this.armed.get(id)?.();
    this.armed.set(id, unsubscribe);
  }

  /** false when the id was not armed (already ended, or made on an earlier tunnel connection). */
  unsubscribe(id: string): boolean {
    const unsubscribe = this.armed.get(id);
    if (!unsubscribe) return false;
    this.armed.delete(id);
    unsubscribe();
    return true;
  }

  /** Disarms everything (the tunnel closed, or the edge stops). */
  clear(): void {
    for (const unsubscribe of this.armed.values()) unsubscribe();
    this.armed.clear();
  }

  /** The ids armed now (what tests assert on). */
  get ids(): string[] {
    return [...this.armed.keys()];
  }
}
