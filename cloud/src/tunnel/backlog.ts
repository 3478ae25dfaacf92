import { EventEmitter } from 'node:events';

/** gives a share of the backlog back; releasing it twice is harmless */
export type Release = () => void;

/** room taken in the backlog */
export interface Share {
  release: Release;
  /** sets the share's size (a frame admitted on an estimate, once its real size is known) */
  resize(bytes: number): void;
}

interface Waiter {
  bytes: number;
  admit: (share: Share) => void;
}

/**
 * Bounds the large frames (snapshots) of all tunnels that are being parsed, validated or stored
 * at once, by their size on the wire: a parsed snapshot is several times its frame, and in a
 * first sync of a hundred edges they used to wait for their turn all parsed (RSS 332 → 654 MB).
 * A frame over the budget waits here as its raw bytes, unparsed, and its connection stops reading
 * (EdgeConnection pauses the socket), so the edge's next frames wait in the kernel's buffers and,
 * once those are full, in the edge. Frames are admitted first come, first served; a frame is
 * always admitted when nothing else is, so one larger than the budget still goes through.
 *
 * Emits 'wait' (a frame had to wait) and 'admit' (a waiting frame was admitted); counts them too.
 */
export class SnapshotBacklog extends EventEmitter {
  readonly maxBytes: number;
  /** bytes of the frames admitted and not yet released */
  bytes = 0;
  /** frames that had to wait (tests and the bench: the bound is observable) */
  waited = 0;
  /** the largest `bytes` seen */
  peakBytes = 0;
  private readonly waiters: Waiter[] = [];

  constructor(maxBytes: number) {
    super();
    this.maxBytes = maxBytes;
  }

  /** Frames waiting for admission. */
  get waiting(): number {
    return this.waiters.length;
  }

  /**
   * Admits a frame of `bytes` now (true: `admit` has been called) or once the frames before it
   * released enough (false: the caller should stop reading meanwhile).
   */
  enter(bytes: number, admit: (share: Share) => void): boolean {
    if (this.waiters.length === 0 && this.fits(bytes)) {
      admit(this.take(bytes));
      return true;
    }
    this.waiters.push({ bytes, admit });
    this.waited += 1;
    this.emit('wait', bytes);
    return false;
  }

  private fits(bytes: number): boolean {
    return this.bytes === 0 || this.bytes + bytes <= this.maxBytes;
  }

  private take(bytes: number): Share {
    let held = 0;
    let released = false;
    const resize = (to: number) => {
      if (released) return;
      const shrinks = to < held;
      this.bytes += to - held;
      held = to;
      if (this.bytes > this.peakBytes) this.peakBytes = this.bytes;
      if (shrinks) this.admitWaiting();
    };
    resize(bytes);
    return {
      resize,
      release: () => {
        resize(0);
        released = true;
      },
    };
  }

  private admitWaiting(): void {
    while (this.waiters.length > 0 && this.fits(this.waiters[0]!.bytes)) {
      const { bytes, admit } = this.waiters.shift()!;
      admit(this.take(bytes));
      this.emit('admit', bytes);
    }
  }
}
