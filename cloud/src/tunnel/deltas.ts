import type { EntityState, tunnel } from '@smarthome/protocol';
import type { EdgeConnection } from './connection.ts';
import type { StateChanged } from './hub-types.ts';

/** What the deltas of the edges' tunnels need from the rest of the cloud (the mirror). */
export interface DeltaDeps {
  /**
   * Applies consecutive deltas of one edge as one unit, `lastSeq` being the last one's; returns,
   * per delta, the entity's previous state for state deltas (for state_changed fan-out).
   */
  applyDeltas(
    edgeId: number,
    lastSeq: number,
    deltas: tunnel.Delta[],
  ): Promise<({ oldState?: EntityState | null } | void)[]>;
}

type Emit = (name: 'state_changed', change: StateChanged) => void;

/** The hub's deltas: written as one unit per batch, acknowledged once committed, then announced. */
export class TunnelDeltas {
  private readonly deps: DeltaDeps;
  private readonly emit: Emit;

  constructor(deps: DeltaDeps, emit: Emit) {
    this.deps = deps;
    this.emit = emit;
  }

  /** Writes the batch, acknowledges it once committed, then announces its changes. */
  async apply(conn: EdgeConnection, batch: tunnel.DeltaMessage[]): Promise<void> {
    const edgeId = conn.edgeId;
    const last = batch[batch.length - 1]!.seq;
    const outs = await this.deps.applyDeltas(
      edgeId,
      last,
      batch.map((m) => m.delta),
    );
    conn.send({ type: 'ack', seq: last });
    batch.forEach((msg, i) => {
      const oldState = outs[i]?.oldState ?? null;
      const { delta } = msg;
      let changed: StateChanged | null = null;
      if (delta.kind === 'state') {
        changed = { edgeId, entity_id: delta.state.entity_id, old_state: oldState, new_state: delta.state };
      } else if (delta.kind === 'entity_upsert' && oldState) {
        // the record disabled its entity: the state is gone, as on the edge
        changed = { edgeId, entity_id: delta.entity.entity_id, old_state: oldState, new_state: null };
      }
      if (changed) this.emit('state_changed', changed);
    });
  }
}
