import type { EntityState, tunnel, ws } from '@smarthome/protocol';
import type { RpcResult } from './connection.ts';

// What the hub emits and what it asks of other replicas (re-exported by hub.ts).

/**
 * Tunnels held by other cloud replicas (scale-out, cloud/src/scale/): consulted only for
 * edges not connected to this process. Absent on a single replica.
 */
export interface RemoteTunnel {
  /** runs the request on the replica holding the edge's tunnel; EdgeOfflineError when none does */
  request(edgeId: number, req: Omit<tunnel.TunnelRequest, 'type' | 'id'>, timeoutMs: number): Promise<RpcResult>;
  /** asks every replica to drop the edge's tunnel */
  disconnect(edgeId: number, reason: string): void;
}

export interface StateChanged {
  edgeId: number;
  entity_id: string;
  old_state: EntityState | null;
  new_state: EntityState | null;
}

/** Any other event of an edge's bus (custom events, automation_triggered, call_service). */
export interface EdgeEvent {
  edgeId: number;
  event: ws.BusEvent;
}

/** A subscribe_trigger subscription the cloud made on an edge fired (HA's event body). */
export interface TriggerFired {
  edgeId: number;
  subscription: string;
  variables: Record<string, unknown>;
  context: ws.BusEvent['context'] | null;
}
