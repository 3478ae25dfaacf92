import { and, eq, gte, lt } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { CloudDatabase, Migration } from '../db/database.ts';

/**
 * Config flows started through the cloud: which edge each lives on and who started it. In the
 * shared database (not process memory) so a flow started on one cloud replica continues on another.
 */
export const cloudFlows = sqliteTable('cloud_flows', {
  flowId: text('flow_id').primaryKey(),
  edgeId: integer('edge_id').notNull(),
  userId: text('user_id').notNull(),
  /** ISO time the flow was started; rows older than the TTL are ignored and swept on write. */
  createdAt: text('created_at').notNull(),
});

export const flowMigrations: Migration[] = [
  {
    id: 'flows-001-init',
    sql: `CREATE TABLE cloud_flows (
    flow_id TEXT PRIMARY KEY,
    edge_id INTEGER NOT NULL REFERENCES edges(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL
  );
  CREATE INDEX cloud_flows_created_at ON cloud_flows(created_at);`,
  },
];

/** Which edge (and which user) each config flow started through the cloud belongs to. */
export class FlowDirectory {
  private readonly database: CloudDatabase;
  private readonly ttlMs: number;
  constructor(database: CloudDatabase, ttlMs = 60 * 60_000) {
    this.database = database;
    this.ttlMs = ttlMs;
  }
  async remember(flowId: string, edgeId: number, userId: string): Promise<void> {
    await this.sweep();
    const row = { flowId, edgeId, userId, createdAt: new Date().toISOString() };
    await this.database.db
      .insert(cloudFlows)
      .values(row)
      .onConflictDoUpdate({ target: cloudFlows.flowId, set: { edgeId, userId, createdAt: row.createdAt } });
  }
  /** Only the user who started a flow may continue it. */
  async get(flowId: string, userId: string): Promise<{ edgeId: number } | null> {
    const row = await this.database.db
      .select({ edgeId: cloudFlows.edgeId })
      .from(cloudFlows)
      .where(
        and(eq(cloudFlows.flowId, flowId), eq(cloudFlows.userId, userId), gte(cloudFlows.createdAt, this.cutoff())),
      )
      .get();
    return row ? { edgeId: row.edgeId } : null;
  }
  async forget(flowId: string): Promise<void> {
    await this.database.db.delete(cloudFlows).where(eq(cloudFlows.flowId, flowId));
  }
  private async sweep(): Promise<void> {
    await this.database.db.delete(cloudFlows).where(lt(cloudFlows.createdAt, this.cutoff()));
  }
  private cutoff(): string {
    return new Date(Date.now() - this.ttlMs).toISOString();
  }
}
