import { HA_VERSION, HaAuth, HaCommandBase, type HaErrorCode, type HaServerMessage } from '../../ha/index.ts';
import { parseJson } from '../json.ts';
import type { Logger } from '../log.ts';
import { describeZodError } from '../router.ts';
import { HaAuthRefused, HaCommandError, HaRawJson, type HaBackend, type Unsubscribe } from './backend.ts';
import { ALREADY_ANSWERED, type HaCommandSession, type HaCommands } from './command.ts';
import { coreCommands } from './commands.ts';
import { optionalCommands } from './optional-commands.ts';

/** How a session talks to its socket: edge and cloud attach their `ws` sockets with these two functions. */
export interface HaTransport {
  send(text: string): void;
  close(code: number, reason: string): void;
}

export interface HaSessionOptions<P> {
  backend: HaBackend<P>;
  transport: HaTransport;
  log: Logger;
  /** more commands (or replacements), by type */
  commands?: HaCommands<P>;
  haVersion?: string;
}

/**
 * One client of the Home Assistant WebSocket API, following HA's websocket_api: auth phase
 * (auth_required → auth → auth_ok | auth_invalid + close), then commands with increasing
 * ids (id_reuse otherwise), `result` success/error{code,message}, ping/pong,
 * supported_features (coalesce_messages: queued messages go out as one JSON array) and the
 * subscriptions' bookkeeping. Transport-agnostic: feed it `receive(text)`, call `close()` when the socket closes.
 */
export class HaSession<P> implements HaCommandSession<P> {
  readonly backend: HaBackend<P>;
  private readonly transport: HaTransport;
  private readonly log: Logger;
  private readonly commands: HaCommands<P>;
  private readonly haVersion: string;
  private principalValue: P | null = null;
  private lastId = -1;
  private closed = false;
  private coalesce = false;
  /** serialised messages (a raw JSON result goes in without a parse/stringify round trip) */
  private readonly queue: string[] = [];
  private flushScheduled = false;
  private readonly subscriptions = new Map<number, Unsubscribe>();

  constructor(options: HaSessionOptions<P>) {
    this.backend = options.backend;
    this.transport = options.transport;
    this.log = options.log;
    this.commands = {
      ...(coreCommands as unknown as HaCommands<P>),
      ...(optionalCommands as unknown as HaCommands<P>),
      ...options.commands,
    };
    this.haVersion = options.haVersion ?? HA_VERSION;
  }

  get principal(): P {
    if (this.principalValue === null) throw new HaCommandError('unauthorized', 'Unauthorized');
    return this.principalValue;
  }

  get authenticated(): boolean {
    return this.principalValue !== null;
  }

  /** Sends auth_required: call once the socket is open. */
  open(): void {
    this.send({ type: 'auth_required', ha_version: this.haVersion });
  }

  /** Ends every subscription; nothing more is sent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const unsubscribe of this.subscriptions.values()) this.safely(unsubscribe);
    this.subscriptions.clear();
  }

  async receive(text: string): Promise<void> {
    if (this.closed) return;
    let data: unknown;
    try {
      data = parseJson(text);
    } catch {
      // HA disconnects on invalid JSON (here also on JSON deeper than MAX_JSON_DEPTH)
      this.end(1003, 'Received invalid JSON.');
      return;
    }
    if (this.principalValue === null) return this.authenticate(data);
    // HA accepts a batch of commands as one JSON array
    for (const msg of Array.isArray(data) ? data : [data]) await this.command(msg);
  }

  setCoalesce(on: boolean): void {
    this.coalesce = on;
  }

  /** Registers a subscription under its command id (unsubscribe_events ends it). */
  addSubscription(id: number, unsubscribe: Unsubscribe): void {
    if (this.closed) {
      this.safely(unsubscribe);
      return;
    }
    this.subscriptions.set(id, unsubscribe);
  }

  removeSubscription(id: number): boolean {
    const unsubscribe = this.subscriptions.get(id);
    if (!unsubscribe) return false;
    this.subscriptions.delete(id);
    this.safely(unsubscribe);
    return true;
  }

  get subscriptionCount(): number {
    return this.subscriptions.size;
  }

  sendEvent(id: number, event: unknown): void {
    if (this.subscriptions.has(id)) this.send({ id, type: 'event', event });
  }

  sendResult(id: number, result: unknown): void {
    if (result instanceof HaRawJson) {
      this.sendText(`{"id":${id},"type":"result","success":true,"result":${result.json}}`);
      return;
    }
    this.send({ id, type: 'result', success: true, result: result === undefined ? null : result });
  }

  sendPong(id: number): void {
    this.send({ id, type: 'pong' });
  }

  sendError(id: number, code: HaErrorCode, message: string): void {
    this.send({ id, type: 'result', success: false, error: { code, message } });
  }

  private async authenticate(data: unknown): Promise<void> {
    const parsed = HaAuth.safeParse(data);
    if (!parsed.success) {
      this.send({
        type: 'auth_invalid',
        message: `Auth message incorrectly formatted: ${describeZodError(parsed.error)}`,
      });
      this.end(4001, 'auth_invalid');
      return;
    }
    let principal: P | null = null;
    let refusal = 'Invalid access token or password';
    try {
      principal = await this.backend.authenticate(parsed.data);
    } catch (err) {
      if (err instanceof HaAuthRefused) refusal = err.message;
      else this.log.error('ha websocket: authentication failed', err);
    }
    if (this.closed) return;
    if (principal === null) {
      this.send({ type: 'auth_invalid', message: refusal });
      this.end(4001, 'auth_invalid');
      return;
    }
    this.principalValue = principal;
    this.send({ type: 'auth_ok', ha_version: this.haVersion });
  }

  private async command(raw: unknown): Promise<void> {
    const base = HaCommandBase.safeParse(raw);
    if (!base.success) {
      const id =
        raw && typeof raw === 'object' && typeof (raw as { id?: unknown }).id === 'number'
          ? (raw as { id: number }).id
          : 0;
      this.sendError(id, 'invalid_format', 'Message incorrectly formatted.');
      return;
    }
    const { id, type } = base.data;
    if (id <= this.lastId) {
      this.sendError(id, 'id_reuse', 'Identifier values have to increase.');
      return;
    }
    this.lastId = id;
    const handler = Object.hasOwn(this.commands, type) ? this.commands[type] : undefined;
    if (!handler) {
      this.sendError(id, 'unknown_command', 'Unknown command.');
      return;
    }
    const msg = handler.schema.safeParse(raw);
    if (!msg.success) {
      this.sendError(id, 'invalid_format', describeZodError(msg.error));
      return;
    }
    try {
      if (this.backend.stillValid && !(await this.backend.stillValid(this.principal))) {
        this.send({ type: 'auth_invalid', message: 'Invalid access token or password' });
        this.end(4001, 'auth_invalid');
        return;
      }
      const result = await handler.handle(this, msg.data);
      if (result !== ALREADY_ANSWERED) this.sendResult(id, result);
    } catch (err) {
      if (err instanceof HaAuthRefused) {
        this.send({ type: 'auth_invalid', message: err.message });
        this.end(4001, 'auth_invalid');
      } else if (err instanceof HaCommandError) this.sendError(id, err.code, err.message);
      else {
        this.log.error(`ha websocket: ${type} failed`, err);
        this.sendError(id, 'unknown_error', 'Unknown error');
      }
    }
  }

  private send(msg: HaServerMessage): void {
    this.sendText(JSON.stringify(msg));
  }

  private sendText(text: string): void {
    if (this.closed) return;
    this.queue.push(text);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // like HA (loop.call_soon): what is queued before the next turn of the loop leaves together (as an array when coalescing)
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.queue.splice(0);
    if (batch.length === 0) return;
    try {
      if (this.coalesce && batch.length > 1) this.transport.send(`[${batch.join(',')}]`);
      else for (const m of batch) this.transport.send(m);
    } catch (err) {
      this.log.warn('ha websocket: send failed', { error: String(err) });
    }
  }

  private end(code: number, reason: string): void {
    this.flush();
    this.close();
    this.transport.close(code, reason);
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error('ha websocket: unsubscribe failed', err);
    }
  }
}
