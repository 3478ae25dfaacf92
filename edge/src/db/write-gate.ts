/**
 * Who writes to the SQLite file now, between the main thread's background writes (the states'
 * and retained messages' write-behind) and the recorder's writer thread, which has its own
 * connection: a word in shared memory, 0 free, WRITER held by the thread, MAIN by the main thread.
 * Without it the main thread's write-behind waited on the thread's transaction in SQLite's busy
 * handler, which sleeps 1, 2, 5, 10… ms at a time with the event loop (and so the broker) stopped;
 * now a background write that finds the thread writing is tried again a few ms later. Writes a
 * caller waits for (flush(), the HTTP API's commits) do not take the gate: SQLite's lock orders them.
 */
export interface WriteGate {
  /** takes the gate for the main thread when free; false when the writer thread holds it */
  tryEnter(): boolean;
  leave(): void;
}

export const GATE_FREE = 0;
export const GATE_WRITER = 1;
export const GATE_MAIN = 2;

/** The main thread's side, over the slot `slot` of a shared Int32Array. */
export function mainGate(control: Int32Array, slot: number): WriteGate {
  return {
    tryEnter: () => Atomics.compareExchange(control, slot, GATE_FREE, GATE_MAIN) === GATE_FREE,
    leave: () => {
      Atomics.store(control, slot, GATE_FREE);
      Atomics.notify(control, slot);
    },
  };
}

/** The writer thread's side: waits (it may block, it serves no event loop anyone waits on) for the main thread's write to end. */
export function enterAsWriter(control: Int32Array, slot: number): void {
  for (;;) {
    const was = Atomics.compareExchange(control, slot, GATE_FREE, GATE_WRITER);
    if (was === GATE_FREE) return;
    // bounded: a main thread that died holding it must not hang the thread (SQLite's lock still orders writes)
    if (Atomics.wait(control, slot, was, 1000) === 'timed-out') return;
  }
}

export function leaveAsWriter(control: Int32Array, slot: number): void {
  Atomics.compareExchange(control, slot, GATE_WRITER, GATE_FREE);
  Atomics.notify(control, slot);
}
