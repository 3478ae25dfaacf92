import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface AdmissionLimits {
  /** upgrades handed over to the HTTP server and not yet opened (their handler settled) at once */
  maxOpening: number;
  /** new connections read, and upgrades handed over, in one turn of the loop (together) */
  perTurn: number;
  /** an upgrade stops counting after this long, opened or not */
  holdMs: number;
  /** a new connection that sends nothing for this long once read is closed (as the HTTP server's headersTimeout would) */
  silentMs: number;
}

export const defaultAdmissionLimits: AdmissionLimits = { maxOpening: 64, perTurn: 64, holdMs: 1_000, silentMs: 10_000 };

type Listener = (socket: Socket) => void;

function destroyUnread(this: Socket): void {
  this.destroy();
}

function setPauseOnConnect(server: Server, on: boolean): void {
  (server as unknown as { pauseOnConnect: boolean }).pauseOnConnect = on;
}

/** the start of a request asking to switch protocols: a header line `Upgrade:` (the first chunk holds the head in practice) */
const UPGRADE_HEADER = /\r\nupgrade\s*:/i;

/**
 * Admission at accept (#19). libuv reads every readable socket in one poll phase, so ten
 * thousand edges reconnecting at once are ten thousand upgrade requests taken through Node's
 * HTTP machinery in one turn of the loop (the reconnect storm's longest stall, before any
 * handler could defer its work). Here a new connection is accepted unread (net's
 * `pauseOnConnect`), and each turn of the loop reads the first chunk of a few (`perTurn`, shared
 * with the hand-overs below), newest first: a health check arriving during a storm is looked at
 * in the next turn, and under overload the oldest, whose clients may have given up, wait. A plain
 * request (a health check, an API call) then goes to the HTTP server at once. An upgrade waits in
 * order: at most `maxOpening` are opening at once and at most `perTurn` are handed over in a turn
 * (slots freed at once, by clients gone while they waited, would otherwise chain hand-overs in
 * one turn). The work of one turn stays bounded while a storm queues.
 *
 * An upgrade has opened when its handler settles (`opened`, from the UpgradeDispatcher: the
 * tunnel's once its hello is answered); it stops counting when it closes, or after `holdMs` in
 * any case, so clients holding slots on purpose (an upgrade's head never finished) delay the
 * upgrades behind them by `holdMs` at most, and plain requests never. A connection silent for
 * `silentMs` once read is closed, not handed over: its request, written late (by a client whose
 * own loop was blocked), would be parsed by Node's HTTP parser in whatever turn it arrived,
 * outside any bound (measured: the storm's longest turn again, until this).
 */
export class ConnectionAdmission {
  private readonly limits: AdmissionLimits;
  private server: Server | null = null;
  /** the server's own 'connection' listeners (Node's HTTP connection setup), run at hand-over */
  private listeners: Listener[] = [];
  /** connections not handed over yet: unread, first byte awaited, or an upgrade waiting its turn */
  private readonly unread = new Map<Socket, NodeJS.Timeout | null>();
  /** accepted, not read yet (read newest first) */
  private readonly fresh: Socket[] = [];
  /** the next turn's pass, when work waits */
  private turn: NodeJS.Immediate | null = null;
  /** reads and hand-overs done in this turn */
  private spent = 0;
  /** upgrades read, waiting for a slot (in order; `head` is the next) */
  private readonly waiting: Socket[] = [];
  private head = 0;
  /** upgrades handed over and opening: their hold timers */
  private readonly opening = new Map<Socket, NodeJS.Timeout>();
  private readonly onConnection = (socket: Socket) => {
    // not the HTTP server's yet, it can still fail (a reset): without a listener that would be an uncaught error
    socket.on('error', destroyUnread);
    // gone before it was handed over (a TCP health check, a client that gave up): forgotten; an
    // upgrade closing while it opens frees its slot
    socket.once('close', () => {
      this.forget(socket);
      this.opened(socket);
    });
    this.unread.set(socket, null);
    this.fresh.push(socket);
    this.nextTurn();
  };
  /** an upgrade served as a plain request (not claimed: h2c, an unknown path) has opened */
  private readonly onRequest = (req: { socket: Socket }) => this.opened(req.socket);
  /** A turn's pass: the budget renewed, upgrades handed over while there is room, then new connections read. */
  private readonly pass = () => {
    this.turn = null;
    this.spent = 0;
    this.admitWhileRoom();
    while (this.spent < this.limits.perTurn && this.fresh.length > 0) {
      const socket = this.fresh.pop()!;
      if (socket.destroyed) {
        this.unread.delete(socket);
        continue;
      }
      this.spent += 1;
      this.readFirstChunk(socket);
    }
    if (this.fresh.length > 0) this.nextTurn();
  };

  constructor(limits: Partial<AdmissionLimits> = {}) {
    this.limits = { ...defaultAdmissionLimits, ...limits };
  }

  /** Upgrades waiting for their turn. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  /** Connections accepted and not handed over yet (unread, being read, or waiting). */
  get unreadCount(): number {
    return this.unread.size;
  }

  /** Upgrades handed over and still opening. */
  get openingCount(): number {
    return this.opening.size;
  }

  attach(server: Server): void {
    this.server = server;
    // net.Server reads this for every accepted connection: the socket is created unread (until
    // resume()), net.createServer's documented `pauseOnConnect`, which http.createServer does not pass on
    setPauseOnConnect(server, true);
    this.listeners = server.listeners('connection') as Listener[];
    server.removeAllListeners('connection');
    server.on('connection', this.onConnection);
    server.prependListener('request', this.onRequest);
  }

  /**
   * Gives the server its listeners back and drops the connections not handed over: a closing
   * server waits for every accepted connection (their clients retry).
   */
  detach(): void {
    const server = this.server;
    if (!server) return;
    this.server = null;
    setPauseOnConnect(server, false);
    server.off('connection', this.onConnection);
    server.off('request', this.onRequest);
    if (this.turn) clearImmediate(this.turn);
    this.turn = null;
    this.fresh.length = 0;
    for (const l of this.listeners) server.on('connection', l);
    for (const [socket, timer] of this.unread) {
      if (timer) clearTimeout(timer);
      socket.destroy();
    }
    this.unread.clear();
    this.waiting.length = 0;
    this.head = 0;
    for (const timer of this.opening.values()) clearTimeout(timer);
    this.opening.clear();
  }

  /** The upgrade has opened (or will not): it stops counting, and the next one waiting is handed over. */
  opened(socket: Socket): void {
    const timer = this.opening.get(socket);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.opening.delete(socket);
    this.admitWhileRoom();
  }

  private forget(socket: Socket): void {
    const timer = this.unread.get(socket);
    if (timer) clearTimeout(timer);
    this.unread.delete(socket);
  }

  private nextTurn(): void {
    this.turn ??= setImmediate(this.pass);
  }

  private admitWhileRoom(): void {
    while (this.opening.size < this.limits.maxOpening && this.head < this.waiting.length) {
      if (this.spent >= this.limits.perTurn) {
        this.nextTurn();
        return;
      }
      const socket = this.waiting[this.head++];
      if (this.head > 1024 && this.head * 2 > this.waiting.length) {
        this.waiting.splice(0, this.head);
        this.head = 0;
      }
      if (socket.destroyed) {
        this.unread.delete(socket);
        continue;
      }
      this.spent += 1;
      const timer = setTimeout(() => this.opened(socket), this.limits.holdMs);
      timer.unref();
      this.opening.set(socket, timer);
      this.handOver(socket);
    }
  }

  private readFirstChunk(socket: Socket): void {
    const onData = (chunk: Buffer) => {
      stopLooking();
      socket.pause();
      socket.unshift(chunk);
      if (!this.server) return;
      if (!UPGRADE_HEADER.test(chunk.toString('latin1', 0, Math.min(chunk.length, 8192)))) {
        this.handOver(socket);
        return;
      }
      this.unread.set(socket, null);
      this.waiting.push(socket);
      this.admitWhileRoom();
    };
    const silent = setTimeout(() => {
      stopLooking();
      this.unread.delete(socket);
      socket.destroy();
    }, this.limits.silentMs);
    silent.unref();
    // a client gone before its first byte: nothing to hand over
    const onEnd = () => socket.destroy();
    const stopLooking = () => {
      clearTimeout(silent);
      socket.off('data', onData);
      socket.off('end', onEnd);
    };
    this.unread.set(socket, silent);
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.resume();
  }

  /** Node's HTTP connection setup, then reading (the first chunk, put back, is parsed first). */
  private handOver(socket: Socket): void {
    const server = this.server;
    if (!server || !this.unread.delete(socket)) return;
    socket.off('error', destroyUnread);
    for (const l of this.listeners) l.call(server, socket);
    socket.resume();
  }
}
