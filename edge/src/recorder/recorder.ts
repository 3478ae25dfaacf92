import type { EdgeEventType, EventBus, StateChangedEvent } from '../bus.ts';
import type { EdgeDatabase } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { HistoryJsonOptions } from './history-json.ts';
import { RecorderQueries, type History, type HistoryQuery, type LogbookQuery, type LogbookRow } from './queries.ts';
import type { PendingRow } from './store.ts';
import { RowBatcher } from './batcher.ts';
import { AttributeJson, IsoSeconds } from './ingest-cache.ts';
import { AdaptiveWriter, type AdaptiveWriterOptions } from './adaptive-writer.ts';
import { InlineWriter } from './inline-writer.ts';
import { RecorderWriter, type RowWriter } from './writer.ts';

export interface Clock {
  /** epoch milliseconds */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface RecorderOptions {
  /** rows older than this many days are purged */
  historyDays: number;
  /** write-behind window, as for states: longest delay (ms) and batch size (default 5,000 rows; 1,000 inline) */
  flushDelayMs?: number;
  maxBatch?: number;
  /** local time of the nightly purge; default 04:12 (as HA) */
  purgeAt?: { hour: number; minute: number };
  /** rows deleted per purge step; the event loop runs between steps */
  purgeBatch?: number;
  /**
   * 'auto' (default): on the main thread until rows come faster than 200 a second for three
   * seconds in a row, then in the writer thread (AdaptiveWriter); 'thread': JSON and SQL in a writer thread with its own
   * connection from the start; 'inline': on the main thread, as before it. Default from
   * RECORDER_WRITER (inline, thread), for the benchmark's same-run variants.
   */
  writer?: 'auto' | 'thread' | 'inline';
  /** when 'auto' starts the thread (AdaptiveWriter's defaults when absent), for tests */
  adaptive?: AdaptiveWriterOptions;
}

const DAY_MS = 86_400_000;
/** Bus events recorded in recorder_events (state_changed goes to recorder_states). */
const RECORDED_EVENTS: readonly EdgeEventType[] = [
  'call_service',
  'device_upsert',
  'device_remove',
  'entity_upsert',
  'entity_remove',
  'config_entry_upsert',
  'config_entry_remove',
];

/**
 * The edge's recorder: every state change and bus event goes to SQLite, write-behind (the bus
 * listener only queues an object; batches go to a writer thread with its own connection, which
 * does the JSON and the SQL off the ingest thread), and is purged after
 * `historyDays` every night at `purgeAt` (and at start when the last purge is over a day old).
 * Queries (history, logbook) read the same database; ha-shapes.ts maps them to HA's wire shapes.
 */
export class Recorder {
  private readonly database: EdgeDatabase;
  private readonly bus: EventBus;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly options: RecorderOptions;
  private readonly writer: RowWriter;
  private readonly queries: RecorderQueries;
  private readonly pending: RowBatcher<PendingRow>;
  private offs: (() => void)[] = [];
  private purgeTimer: NodeJS.Timeout | null = null;
  private purging: Promise<number> | null = null;
  private running = false;
  /** read at each background write: the default writer starts its thread only under load */
  private readonly gateSource = () => this.writer.gate;
  private readonly seconds = new IsoSeconds();
  private readonly attributeJson = new AttributeJson();

  constructor(deps: { database: EdgeDatabase; bus: EventBus; log: Logger; clock?: Clock }, options: RecorderOptions) {
    this.database = deps.database;
    this.bus = deps.bus;
    this.log = deps.log;
    this.clock = deps.clock ?? systemClock;
    this.options = options;
    const fromEnv = process.env.RECORDER_WRITER;
    const writer = options.writer ?? (fromEnv === 'inline' || fromEnv === 'thread' ? fromEnv : 'auto');
    const thread = () => new RecorderWriter(deps.database.file, deps.log);
    this.writer =
      writer === 'inline'
        ? new InlineWriter(deps.database)
        : writer === 'thread'
          ? thread()
          : new AdaptiveWriter(new InlineWriter(deps.database), thread, deps.log, options.adaptive);
    this.queries = new RecorderQueries(deps.database);
    this.pending = new RowBatcher<PendingRow>({
      delayMs: options.flushDelayMs ?? 250,
      // a transaction of 5,000 rows costs the thread about a third less per row than 1,000 (fewer
      // commits rewriting the same index pages); on the main thread 1,000 keeps each stall short
      maxBatch: options.maxBatch ?? (() => (this.threaded ? 5000 : 1000)),
      write: (rows) => this.writer.write(rows),
      onError: (err) => this.log.error('recorder: write failed, retrying', err),
    });
  }

  start(): void {
    this.writer.start();
    // the states' and retained messages' background writes take turns with the thread's transactions
    this.database.useWriteGate(this.gateSource);
    this.queries.reset();
    this.pending.start();
    this.running = true;
    this.offs.push(this.bus.on('state_changed', (e) => this.recordState(e)));
    for (const type of RECORDED_EVENTS) this.offs.push(this.bus.on(type, (data) => this.recordEvent(type, data)));
    this.recordEvent('homeassistant_start', {});
    this.scheduleNightlyPurge();
    if (this.lastPurge() < this.clock.now() - DAY_MS) this.purgeInBackground();
  }

  /** Unsubscribes, then writes what is pending and waits for the writer thread to exit (the database is still open). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    for (const off of this.offs) off();
    this.offs = [];
    if (this.purgeTimer) {
      clearTimeout(this.purgeTimer);
      this.purgeTimer = null;
    }
    await this.purging?.catch(() => 0);
    this.recordEvent('homeassistant_stop', {});
    this.pending.stop();
    this.attributeJson.clear();
    this.database.useWriteGate(null);
    await this.writer.stop();
    this.queries.reset();
  }

  /** A renamed entity's history moves to its new id (written rows first, so none is left behind). */
  renameEntity(oldId: string, newId: string): boolean {
    this.flush();
    const moved = this.writer.renameEntity(oldId, newId);
    this.queries.reset();
    return moved;
  }

  /** Writes pending rows now and waits until the writer thread committed them (queries only see written rows). */
  flush(): void {
    this.pending.flush();
    this.writer.flush();
  }

  /** Rows recorded and not yet committed (queued here or in the writer thread). */
  get pendingRows(): number {
    return this.pending.pending + this.writer.pendingRows;
  }

  /** true while the rows are written by the writer thread (not the main thread) */
  get threaded(): boolean {
    return this.writer instanceof RecorderWriter || (this.writer instanceof AdaptiveWriter && this.writer.threaded);
  }

  /** Batches handed to the writer thread, one transaction each. */
  get writtenBatches(): number {
    return this.writer.batches;
  }

  /** Records an event that is not on the bus (e.g. logbook_entry); data must be JSON. */
  recordEvent(eventType: string, data: unknown): void {
    this.pending.push({
      kind: 'event',
      event_type: eventType,
      data,
      time_fired: this.clock.now() / 1000,
    });
  }

  history(query: HistoryQuery): History {
    return this.queries.history(query);
  }

  /** history() as HA's JSON answer, written from raw rows (history-json.ts): what the HA API sends. */
  historyJson(query: HistoryQuery, options: Omit<HistoryJsonOptions, 'no_attributes'>): string {
    return this.queries.historyJson(query, options);
  }

  logbook(query: LogbookQuery): LogbookRow[] {
    return this.queries.logbook(query);
  }

  private recordState(e: StateChangedEvent): void {
    const s = e.new_state;
    const lastUpdated = s?.last_updated ? this.seconds.of(s.last_updated) : this.clock.now() / 1000;
    // most updates change the state: one parse, not two
    const lastChanged =
      s?.last_changed && s.last_changed !== s.last_updated ? this.seconds.of(s.last_changed) : lastUpdated;
    this.pending.push({
      kind: 'state',
      entity_id: e.entity_id,
      state: s ? s.state : null,
      attributes: null,
      shared: s ? this.attributeJson.of(e.entity_id, s.attributes) : null,
      last_updated: lastUpdated,
      last_changed: lastChanged === lastUpdated ? null : lastChanged,
    });
  }

  /**
   * Deletes rows older than historyDays, in steps of `purgeBatch` rows with the event loop free
   * in between, so ingest goes on. Resolves with the number of history rows deleted.
   */
  purge(): Promise<number> {
    this.purging ??= this.runPurge().finally(() => {
      this.purging = null;
    });
    return this.purging;
  }

  private purgeInBackground(): void {
    this.purge().catch((err: unknown) => this.log.error('recorder: purge failed', err));
  }

  private async runPurge(): Promise<number> {
    const cutoff = (this.clock.now() - this.options.historyDays * DAY_MS) / 1000;
    const batch = this.options.purgeBatch ?? 2000;
    const sqlite = this.database.sqlite;
    const hasOld = sqlite
      .prepare('SELECT 1 FROM recorder_states WHERE metadata_id = ? AND last_updated < ? LIMIT 1')
      .pluck();
    // the deleted rows' sets are the candidates for the orphans' deletion (store.deleteOrphans)
    const deleteStates = sqlite
      .prepare(
        `DELETE FROM recorder_states WHERE state_id IN
          (SELECT state_id FROM recorder_states WHERE metadata_id = ? AND last_updated < ? LIMIT ?)
         RETURNING attributes_id`,
      )
      .pluck();
    const deleteEvents = sqlite.prepare(`DELETE FROM recorder_events WHERE event_id IN
      (SELECT event_id FROM recorder_events WHERE time_fired < ? LIMIT ?)`);
    const metadataIds = sqlite.prepare('SELECT metadata_id FROM recorder_entities').pluck().all() as number[];
    let deleted = 0;
    for (const metadataId of metadataIds) {
      if (!hasOld.get(metadataId, cutoff)) continue;
      // in the writer, in order with its writes: the sets later rows use leave the rows deleted here
      await this.writer.keepSets(metadataId, cutoff);
      let entityDeleted = 0;
      const sets = new Set<number>();
      while (this.running) {
        const setIds = deleteStates.all(metadataId, cutoff, batch) as (number | null)[];
        // carried sets (< 0) go with their rows
        for (const id of setIds) if (id !== null && id > 0) sets.add(id);
        const n = setIds.length;
        entityDeleted += n;
        if (n > 0) await yieldToEventLoop();
        if (n < batch) break;
      }
      if (entityDeleted > 0) {
        // in the writer thread, in order with its writes: its cached ids are dropped there; also
        // when stopping (stop() waits for the purge before the writer), as no later purge would
        // find these sets again
        await this.writer.deleteOrphans(metadataId, [...sets]);
        deleted += entityDeleted;
        await yieldToEventLoop();
      }
      if (!this.running) return deleted;
    }
    while (this.running && deleteEvents.run(cutoff, batch).changes === batch) await yieldToEventLoop();
    if (this.running) {
      sqlite
        .prepare(
          "INSERT INTO recorder_meta (key, value) VALUES ('last_purge', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        )
        .run(String(this.clock.now()));
      if (deleted > 0)
        this.log.info(`recorder: purged ${deleted} state rows older than ${this.options.historyDays} days`);
    }
    return deleted;
  }

  private lastPurge(): number {
    const value = this.database.sqlite
      .prepare("SELECT value FROM recorder_meta WHERE key = 'last_purge'")
      .pluck()
      .get() as string | undefined;
    return value ? Number(value) : 0;
  }

  /** Next purgeAt local time; re-armed after each run (a timer per day, not an interval: DST safe). */
  private scheduleNightlyPurge(): void {
    const { hour, minute } = this.options.purgeAt ?? { hour: 4, minute: 12 };
    const now = new Date(this.clock.now());
    const next = new Date(now.getFullYear(), now.getMonth(), now.getDate(), hour, minute);
    if (next.getTime() <= now.getTime()) next.setDate(next.getDate() + 1);
    this.purgeTimer = setTimeout(() => {
      this.purgeTimer = null;
      if (!this.running) return;
      this.purgeInBackground();
      this.scheduleNightlyPurge();
    }, next.getTime() - now.getTime());
    this.purgeTimer.unref();
  }
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
