import type Database from 'better-sqlite3';
import { and, asc, desc, eq, inArray, notInArray, sql } from 'drizzle-orm';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Automation, AutomationBody, Trace } from '@smarthome/protocol';

/**
 * The engine's own tables on the edge's SQLite connection. Migrations are an ordered,
 * append-only list; `automation_schema` records how many ran (the edge core owns
 * PRAGMA user_version, so this module keeps its own counter). start() applies them.
 */
export const AUTOMATION_MIGRATIONS: string[] = [
  `CREATE TABLE automations (
     id TEXT PRIMARY KEY, edge_id INTEGER, alias TEXT NOT NULL, description TEXT, mode TEXT NOT NULL,
     max INTEGER, config TEXT NOT NULL, enabled INTEGER NOT NULL, webhook_id TEXT UNIQUE,
     created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
   CREATE TABLE automation_traces (
     run_id TEXT PRIMARY KEY, automation_id TEXT NOT NULL, started_at INTEGER NOT NULL,
     failed INTEGER NOT NULL, trace TEXT NOT NULL);
   CREATE INDEX automation_traces_by_automation ON automation_traces(automation_id, started_at);
   CREATE TABLE automation_timers (
     id TEXT PRIMARY KEY, automation_id TEXT NOT NULL, kind TEXT NOT NULL, step_path TEXT NOT NULL,
     due_at INTEGER, context TEXT NOT NULL, created_at INTEGER NOT NULL);
   CREATE INDEX automation_timers_by_automation ON automation_timers(automation_id);`,
];

export const automationsTable = sqliteTable('automations', {
  id: text('id').primaryKey(),
  edgeId: integer('edge_id'),
  alias: text('alias').notNull(),
  description: text('description'),
  mode: text('mode').notNull(),
  max: integer('max'),
  config: text('config', { mode: 'json' }).$type<StoredConfig>().notNull(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull(),
  webhookId: text('webhook_id').unique(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export const tracesTable = sqliteTable('automation_traces', {
  runId: text('run_id').primaryKey(),
  automationId: text('automation_id').notNull(),
  startedAt: integer('started_at').notNull(),
  failed: integer('failed', { mode: 'boolean' }).notNull(),
  trace: text('trace', { mode: 'json' }).$type<Trace>().notNull(),
});
/**
 * A persisted wait: a delay, a wait_for_trigger timeout, a state trigger's `for:` timer, or
 * a `mode: queued` run waiting behind a running one; `context` by kind: StoredTimer.
 */
export const timersTable = sqliteTable('automation_timers', {
  id: text('id').primaryKey(),
  automationId: text('automation_id').notNull(),
  kind: text('kind').notNull().$type<TimerKind>(),
  stepPath: text('step_path').notNull(),
  dueAt: integer('due_at'),
  context: text('context', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
  createdAt: integer('created_at').notNull(),
});
const schema = { automationsTable, tracesTable, timersTable };

/**
 * What each kind of persisted timer keeps to be picked up after a restart. Rows written by older
 * versions may lack the optional fields: the engine falls back to defaults for those.
 */
export type StoredTimer = { id: string; automationId: string; stepPath: string; dueAt: number | null } & (
  | { kind: 'delay' | 'wait'; context: RunWaitContext }
  | { kind: 'for'; context: ForTimerContext }
  | { kind: 'queued'; context: QueuedRunContext }
);
export type TimerKind = StoredTimer['kind'];
/** A run waiting at a delay or wait_for_trigger: where it stopped and what it had so far. */
export type RunWaitContext = {
  cursor: number[];
  variables: Record<string, unknown>;
  steps?: Trace['steps'];
  started_at?: string;
};
/** A state trigger's `for:` timer: which entity, under which key, and the trigger data it fires with. */
export type ForTimerContext = { key?: string; entity_id?: unknown; trigger?: Record<string, unknown> };
/** A `mode: queued` run waiting behind a running one. */
export type QueuedRunContext = {
  trigger?: Record<string, unknown>;
  variables?: Record<string, unknown>;
  chain?: number;
};
type StoredConfig = Pick<Automation, 'trigger' | 'condition' | 'action' | 'variables' | 'secrets'> & {
  max_exceeded?: string;
};

export function migrateAutomationTables(sqlite: Database.Database): void {
  sqlite.exec('CREATE TABLE IF NOT EXISTS automation_schema (version INTEGER NOT NULL)');
  const row = sqlite.prepare('SELECT version FROM automation_schema').get() as { version: number } | undefined;
  const current = row?.version ?? 0;
  if (current > AUTOMATION_MIGRATIONS.length) throw new Error(`automation schema ${current} is newer than this edge`);
  if (current === AUTOMATION_MIGRATIONS.length) return;
  sqlite.transaction(() => {
    for (let v = current; v < AUTOMATION_MIGRATIONS.length; v++) sqlite.exec(AUTOMATION_MIGRATIONS[v]);
    sqlite.exec('DELETE FROM automation_schema');
    sqlite.prepare('INSERT INTO automation_schema (version) VALUES (?)').run(AUTOMATION_MIGRATIONS.length);
  })();
}

export class AutomationStore {
  private readonly sqlite: Database.Database | (() => Database.Database);
  private readonly retention: number;
  private dbHandle: BetterSQLite3Database<typeof schema> | null = null;
  /** the connection, or a getter for one that opens later (the edge opens its database in start()) */
  constructor(sqlite: Database.Database | (() => Database.Database), retention = 20) {
    this.sqlite = sqlite;
    this.retention = retention;
  }

  start(): void {
    const handle = typeof this.sqlite === 'function' ? this.sqlite() : this.sqlite;
    this.handle = handle;
    migrateAutomationTables(handle);
    this.dbHandle = drizzle(handle, { schema });
  }

  private handle: Database.Database | null = null;
  private get conn(): Database.Database {
    if (!this.handle) throw new Error('automation store is not started');
    return this.handle;
  }

  private get db(): BetterSQLite3Database<typeof schema> {
    if (!this.dbHandle) throw new Error('automation store is not started');
    return this.dbHandle;
  }

  /* ---------------- definitions ---------------- */

  list(): Automation[] {
    return this.db
      .select()
      .from(automationsTable)
      .orderBy(asc(automationsTable.createdAt), asc(automationsTable.id))
      .all()
      .map(toAutomation);
  }

  get(id: string): Automation | undefined {
    const row = this.db.select().from(automationsTable).where(eq(automationsTable.id, id)).get();
    return row ? toAutomation(row) : undefined;
  }

  count(): number {
    return (
      this.db
        .select({ n: sql<number>`count(*)` })
        .from(automationsTable)
        .get()?.n ?? 0
    );
  }

  maxExceeded(id: string): string | undefined {
    return this.db
      .select({ config: automationsTable.config })
      .from(automationsTable)
      .where(eq(automationsTable.id, id))
      .get()?.config.max_exceeded;
  }

  /** Inserts or replaces a definition (body already validated; webhook_id decided by the caller). */
  save(
    id: string,
    body: AutomationBody,
    webhookId: string | null,
    edgeId: number | null,
    now: string,
    existing?: Automation,
  ): Automation {
    const row = {
      id,
      edgeId: body.edge_id ?? existing?.edge_id ?? edgeId,
      alias: body.alias,
      description: body.description ?? null,
      mode: body.mode,
      max: body.max ?? null,
      config: {
        trigger: body.trigger,
        condition: body.condition,
        action: body.action,
        ...(body.variables ? { variables: body.variables } : {}),
        ...(body.secrets ? { secrets: body.secrets } : {}),
        ...(body.max_exceeded ? { max_exceeded: body.max_exceeded } : {}),
      },
      enabled: body.enabled,
      webhookId,
      createdAt: existing?.created_at ?? now,
      updatedAt: now,
    };
    this.db.insert(automationsTable).values(row).onConflictDoUpdate({ target: automationsTable.id, set: row }).run();
    return toAutomation(row);
  }

  remove(id: string): boolean {
    return this.conn.transaction(() => {
      const removed = this.db.delete(automationsTable).where(eq(automationsTable.id, id)).run().changes > 0;
      this.db.delete(tracesTable).where(eq(tracesTable.automationId, id)).run();
      this.db.delete(timersTable).where(eq(timersTable.automationId, id)).run();
      return removed;
    })();
  }

  /* ---------------- traces ---------------- */

  /** Stores a finished run and applies retention: newest N runs plus newest N failed runs. */
  saveTrace(trace: Trace): void {
    const failed = trace.state === 'failed';
    this.conn.transaction(() => {
      this.db
        .insert(tracesTable)
        .values({
          runId: trace.run_id,
          automationId: trace.automation_id,
          startedAt: Date.parse(trace.started_at),
          failed,
          trace,
        })
        .onConflictDoUpdate({ target: tracesTable.runId, set: { failed, trace } })
        .run();
      const keep = (onlyFailed: boolean) =>
        this.db
          .select({ runId: tracesTable.runId })
          .from(tracesTable)
          .where(
            onlyFailed
              ? and(eq(tracesTable.automationId, trace.automation_id), eq(tracesTable.failed, true))
              : eq(tracesTable.automationId, trace.automation_id),
          )
          .orderBy(desc(tracesTable.startedAt), desc(tracesTable.runId))
          .limit(this.retention)
          .all()
          .map((r) => r.runId);
      const kept = [...new Set([...keep(false), ...keep(true)])];
      this.db
        .delete(tracesTable)
        .where(and(eq(tracesTable.automationId, trace.automation_id), notInArray(tracesTable.runId, kept)))
        .run();
    })();
  }

  traces(automationId: string): Trace[] {
    return this.db
      .select({ trace: tracesTable.trace })
      .from(tracesTable)
      .where(eq(tracesTable.automationId, automationId))
      .orderBy(desc(tracesTable.startedAt), desc(tracesTable.runId))
      .all()
      .map((r) => r.trace);
  }

  /* ---------------- persisted timers ---------------- */

  putTimer(t: StoredTimer): void {
    const row = { ...t, createdAt: Date.now() };
    this.db.insert(timersTable).values(row).onConflictDoUpdate({ target: timersTable.id, set: row }).run();
  }

  deleteTimer(id: string): void {
    this.db.delete(timersTable).where(eq(timersTable.id, id)).run();
  }

  deleteTimersOf(automationIds: string[]): void {
    if (automationIds.length) this.db.delete(timersTable).where(inArray(timersTable.automationId, automationIds)).run();
  }

  /** In insertion order (rowid: an upsert keeps it), so queued runs resume in the order they came. */
  timers(): StoredTimer[] {
    return this.db
      .select()
      .from(timersTable)
      .orderBy(asc(sql`rowid`))
      .all()
      .map((r) => {
        const { id, automationId, kind, stepPath, dueAt, context } = r;
        // putTimer wrote each context for its kind
        return { id, automationId, kind, stepPath, dueAt, context } as StoredTimer;
      });
  }
}

function toAutomation(r: typeof automationsTable.$inferSelect): Automation {
  return {
    id: r.id,
    edge_id: r.edgeId,
    alias: r.alias,
    description: r.description,
    mode: r.mode as Automation['mode'],
    max: r.max,
    ...(r.config.variables ? { variables: r.config.variables } : {}),
    ...(r.config.secrets ? { secrets: r.config.secrets } : {}),
    trigger: r.config.trigger,
    condition: r.config.condition,
    action: r.config.action,
    enabled: r.enabled,
    webhook_id: r.webhookId,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}
