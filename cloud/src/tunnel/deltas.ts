import type { EntityState, tunnel } from '@smarthome/protocol';
import type { EdgeConnection } from './connection.ts';
import type { StateChanged } from './hub-types.ts';

/** What the deltas of the edges' tunnels need from the rest of the cloud (the mirror). */
export interface DeltaDeps {
  /**
   * Applies consecutive deltas of one edge as one unit, `lastSeq` being the last one's; returns,
   * per delta, the entity's previous state for state deltas (for state_changed fan-out), unless
   * `oldStates` is false (every change was announced with the old state its edge sent: not read).
   */
  applyDeltas(
    edgeId: number,
    lastSeq: number,
    deltas: tunnel.Delta[],
    oldStates: boolean,
  ): Promise<({ oldState?: EntityState | null } | void)[]>;
  /**
   * A change of the edge was announced (`state_changed`) before its write: `settled` resolves
   * once the write has committed or failed (the mirror's reads of the edge wait for it).
   */
  announce?(edgeId: number, settled: Promise<void>): void;
}

/** Consecutive deltas of one edge, applied as one unit and acknowledged once. */
export interface DeltaBatch {
  readonly messages: tunnel.DeltaMessage[];
  /** per message, the state_changed announced on its arrival (before the commit), if it was */
  readonly announced: (StateChanged | undefined)[];
  /** some message of it is announced only after the commit (it counts in EdgeOrder.late) */
  late: boolean;
  /** settles the announced writes' promise (AnnouncedWrites), once the batch is done */
  settle: (() => void) | null;
}

/** What keeps one edge's events in order. */
export interface EdgeOrder {
  /**
   * queued work of the edge that emits (or may emit) when its turn comes: any message but a
   * delta batch whose changes were all announced on arrival. While there is any, a change is
   * not announced on arrival either.
   */
  late: number;
}

type Emit = (name: 'state_changed' | 'state_committed', change: StateChanged) => void;

/**
 * The hub's deltas: a state change that carries its old state is announced (`state_changed`) on
 * arrival when nothing of the edge queued before it announces later (#19: on PostgreSQL the
 * commit was nearly all of delta→event); every delta is still acknowledged only once committed,
 * the mirror's reads of the edge wait for announced writes meanwhile (AnnouncedWrites), and
 * `state_committed` follows each change's commit (other replicas hear of it then). Any other
 * change (an older edge's, one behind queued work, an entity disabled) is announced after its
 * commit with the mirror's old state.
 */
export class TunnelDeltas {
  private readonly deps: DeltaDeps;
  private readonly emit: Emit;

  constructor(deps: DeltaDeps, emit: Emit) {
    this.deps = deps;
    this.emit = emit;
  }

  /** A batch to fill; `done` must run once it is applied, failed or skipped. */
  open(order: EdgeOrder): { batch: DeltaBatch; done: () => void } {
    const batch: DeltaBatch = { messages: [], announced: [], late: false, settle: null };
    const done = () => {
      batch.settle?.();
      if (batch.late) order.late -= 1;
    };
    return { batch, done };
  }

  /** The delta joins its batch; `announce` false: the tunnel failed, nothing more goes out early. */
  add(edgeId: number, order: EdgeOrder, batch: DeltaBatch, msg: tunnel.DeltaMessage, announce: boolean): void {
    const { delta } = msg;
    batch.messages.push(msg);
    if (announce && delta.kind === 'state' && delta.old_state !== undefined && order.late === 0) {
      const changed: StateChanged = {
        edgeId,
        entity_id: delta.state.entity_id,
        old_state: delta.old_state,
        new_state: delta.state,
      };
      batch.announced.push(changed);
      if (!batch.settle) this.deps.announce?.(edgeId, new Promise<void>((resolve) => (batch.settle = resolve)));
      this.emit('state_changed', changed);
      return;
    }
    batch.announced.push(undefined);
    if (!batch.late) {
      batch.late = true;
      order.late += 1;
    }
  }

  /** Writes the batch, acknowledges it once committed, then announces what was not yet. */
  async apply(conn: EdgeConnection, batch: DeltaBatch): Promise<void> {
    const edgeId = conn.edgeId;
    const { messages } = batch;
    const last = messages[messages.length - 1]!.seq;
    const outs = await this.deps.applyDeltas(
      edgeId,
      last,
      messages.map((m) => m.delta),
      batch.late, // only changes announced after the commit need the mirror's old states
    );
    conn.send({ type: 'ack', seq: last });
    messages.forEach((msg, i) => {
      const announced = batch.announced[i];
      if (announced) {
        this.emit('state_committed', announced);
        return;
      }
      const oldState = outs[i]?.oldState ?? null;
      const { delta } = msg;
      let changed: StateChanged | null = null;
      if (delta.kind === 'state') {
        changed = { edgeId, entity_id: delta.state.entity_id, old_state: oldState, new_state: delta.state };
      } else if (delta.kind === 'entity_upsert' && oldState) {
        // the record disabled its entity: the state is gone, as on the edge
        changed = { edgeId, entity_id: delta.entity.entity_id, old_state: oldState, new_state: null };
      }
      if (!changed) return;
      this.emit('state_changed', changed);
      this.emit('state_committed', changed);
    });
  }
}
