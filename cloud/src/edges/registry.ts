import { EventEmitter } from 'node:events';
import { and, asc, eq, gt, gte, inArray, isNull, ne, sql, type SQL } from 'drizzle-orm';
import type { Edge } from '@smarthome/protocol';
import type { CloudDatabase, Db } from '../db/database.ts';
import type { Resource } from '../authz/can.ts';
import type { Scope } from '../orgs/scope.ts';
import { newSecret, safeEqual, sha256 } from '../auth/secrets.ts';
import { edges } from './tables.ts';

/** Owner (user_id) of every cloud replica: a pseudo-user, never a row of users (user ids are UUIDs). */
export const FLEET_OWNER = 'fleet';
export const EDGE_TOKEN_PREFIX = 'shp_edge';
/** A cloud replica is listed in the fleet while it was seen this recently. */
export const FLEET_ALIVE_MS = 60_000;

type EdgeRow = typeof edges.$inferSelect;

export interface EdgeRegistryEvents {
  /** The edge was revoked: its token is dead; the tunnel must drop its connection now. */
  revoked: [edge: Edge];
  /** register-cloud issued new credentials: connections opened with the previous token should be dropped. */
  rotated: [edge: Edge];
}

export interface CloudRegistration {
  edge: Edge;
  token: string;
  mqtt: { username: string; password: string };
}

const now = () => new Date().toISOString();
/** `?, ?, …` for an IN list (callers skip empty lists: an empty IN list is not valid SQL everywhere) */
const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

function parseObject(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function toEdge(row: EdgeRow): Edge {
  return {
    id: row.id,
    name: row.name,
    org_id: row.orgId,
    user_id: row.userId,
    location: row.location,
    status: row.status,
    capabilities: parseObject(row.capabilities),
    hostname: row.hostname,
    last_seen_at: row.lastSeenAt,
    paired_at: row.pairedAt,
    created_at: row.createdAt,
  };
}

/** What can() needs to know about an edge. */
export function edgeResource(edge: Edge): Resource {
  return { type: 'edge', id: String(edge.id), ownerId: edge.user_id, orgId: edge.org_id };
}

/** The edges of a scope: an organization's edges, or the user's personal (org_id null) edges. */
export function edgeScopeCondition(scope: Scope): SQL {
  return scope.kind === 'org'
    ? eq(edges.orgId, scope.orgId)
    : (and(eq(edges.userId, scope.userId), isNull(edges.orgId)) as SQL);
}

/**
 * The cloud's registry of edge runtimes: creation with a shown-once edge token (stored as
 * sha256), revocation (emits 'revoked' so the tunnel drops the connection at once),
 * self-registration of cloud replicas, edge-token authentication and liveness marks.
 */
export class EdgeRegistry extends EventEmitter<EdgeRegistryEvents> {
  private readonly database: CloudDatabase;
  /** what every tunnel connect and disconnect runs: built once (a reconnect storm runs them per edge) */
  private readonly tunnelQueries: () => ReturnType<typeof buildTunnelQueries>;
  constructor(database: CloudDatabase) {
    super();
    this.database = database;
    this.tunnelQueries = database.prepared(buildTunnelQueries);
  }
  private get db() {
    return this.database.db;
  }

  async create(
    scope: Scope,
    input: { name: string; capabilities?: Record<string, unknown> },
  ): Promise<{ edge: Edge; token: string }> {
    const token = newSecret(EDGE_TOKEN_PREFIX);
    const at = now();
    const row = await this.db
      .insert(edges)
      .values({
        name: input.name,
        orgId: scope.orgId,
        userId: scope.userId,
        location: 'home',
        status: 'pending',
        capabilities: JSON.stringify(input.capabilities ?? {}),
        tokenHash: sha256(token),
        createdAt: at,
        updatedAt: at,
      })
      .returning()
      .get();
    return { edge: toEdge(row), token };
  }

  async get(id: number): Promise<Edge | null> {
    const row = await this.db.select().from(edges).where(eq(edges.id, id)).get();
    return row ? toEdge(row) : null;
  }

  /** Home edges of a scope, oldest first (revoked ones included, with status 'revoked'). */
  async list(scope: Scope): Promise<Edge[]> {
    const rows = await this.db.select().from(edges).where(edgeScopeCondition(scope)).orderBy(asc(edges.id)).all();
    return rows.map(toEdge);
  }

  /** One page of a scope's edges with id > afterId, ordered by id. */
  async page(scope: Scope, afterId: number, limit: number): Promise<Edge[]> {
    const rows = await this.db
      .select()
      .from(edges)
      .where(and(edgeScopeCondition(scope), gt(edges.id, afterId)))
      .orderBy(asc(edges.id))
      .limit(limit)
      .all();
    return rows.map(toEdge);
  }

  /** Revokes: status 'revoked', token and MQTT password forgotten, 'revoked' emitted. Idempotent. */
  async revoke(id: number): Promise<Edge | null> {
    const at = now();
    const row = await this.db
      .update(edges)
      .set({ status: 'revoked', tokenHash: null, mqttPasswordHash: null, revokedAt: at, updatedAt: at })
      .where(eq(edges.id, id))
      .returning()
      .get();
    if (!row) return null;
    const edge = toEdge(row);
    this.emit('revoked', edge);
    return edge;
  }

  /** The edge behind an edge token, or null (unknown, malformed or revoked). */
  async authenticateEdgeToken(token: string): Promise<Edge | null> {
    if (!token.startsWith(`${EDGE_TOKEN_PREFIX}_`)) return null;
    const row = await this.tunnelQueries().byTokenHash.get({ hash: sha256(token) });
    if (!row || row.status === 'revoked') return null;
    return toEdge(row);
  }

  /**
   * authenticateEdgeToken for many tokens in one query (a reconnect storm's upgrades of one tick):
   * per token, its edge's id, or null (unknown, malformed or revoked).
   */
  async edgeIdsByTokens(tokens: readonly string[]): Promise<(number | null)[]> {
    const hashes = tokens.map((t) => (t.startsWith(`${EDGE_TOKEN_PREFIX}_`) ? sha256(t) : null));
    const wanted = [...new Set(hashes.filter((h): h is string => h !== null))];
    if (wanted.length === 0) return tokens.map(() => null);
    // plain SQL: a storm's batches are often of a few edges, for which drizzle's building of the
    // query cost more than running it (the text per list length is prepared once by the driver)
    const rows = await this.database.query<{ id: number; token_hash: string }>(
      `SELECT id, token_hash FROM edges WHERE token_hash IN (${placeholders(wanted.length)}) AND status <> 'revoked'`,
      wanted,
    );
    const byHash = new Map(rows.map((r) => [r.token_hash, r.id]));
    return hashes.map((h) => (h === null ? null : (byHash.get(h) ?? null)));
  }

  /**
   * register-cloud: one edge per hostname (location 'cloud', owner FLEET_OWNER). Every call
   * refreshes name, capabilities and last_seen_at, and issues a new edge token and MQTT
   * password (only hashes are stored, so the previous ones cannot be returned again; they
   * stop working and 'rotated' is emitted). A revoked replica that registers again is
   * reinstated as 'pending'.
   */
  async registerCloud(input: {
    hostname: string;
    name: string;
    capabilities: Record<string, unknown>;
  }): Promise<CloudRegistration> {
    const token = newSecret(EDGE_TOKEN_PREFIX);
    const password = newSecret('shp_mqtt', 24);
    const at = now();
    const capabilities = JSON.stringify(input.capabilities);
    const { row, existed } = await this.database.transaction(async () => {
      const found = await this.db
        .select()
        .from(edges)
        .where(and(eq(edges.location, 'cloud'), eq(edges.hostname, input.hostname)))
        .get();
      if (found) {
        const updated = await this.db
          .update(edges)
          .set({
            name: input.name,
            capabilities,
            tokenHash: sha256(token),
            mqttUsername: `edge-${found.id}`,
            mqttPasswordHash: sha256(password),
            status: found.status === 'revoked' ? 'pending' : found.status,
            revokedAt: null,
            lastSeenAt: at,
            updatedAt: at,
          })
          .where(eq(edges.id, found.id))
          .returning()
          .get();
        return { row: updated, existed: true };
      }
      const inserted = await this.db
        .insert(edges)
        .values({
          name: input.name,
          orgId: null,
          userId: FLEET_OWNER,
          location: 'cloud',
          status: 'pending',
          capabilities,
          hostname: input.hostname,
          tokenHash: sha256(token),
          mqttPasswordHash: sha256(password),
          lastSeenAt: at,
          createdAt: at,
          updatedAt: at,
        })
        .returning()
        .get();
      const withUser = await this.db
        .update(edges)
        .set({ mqttUsername: `edge-${inserted.id}` })
        .where(eq(edges.id, inserted.id))
        .returning()
        .get();
      return { row: withUser, existed: false };
    });
    const edge = toEdge(row);
    if (existed) this.emit('rotated', edge);
    return { edge, token, mqtt: { username: row.mqttUsername ?? `edge-${row.id}`, password } };
  }

  /** Ids of the edges the database believes are online (the scale-out sweeper checks them). */
  async onlineIds(): Promise<number[]> {
    return (await this.db.select({ id: edges.id }).from(edges).where(eq(edges.status, 'online')).all()).map(
      (r) => r.id,
    );
  }

  /** Which of these edges the database shows offline (a replica holding their tunnels corrects that). */
  async offlineAmong(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .select({ id: edges.id })
      .from(edges)
      .where(and(inArray(edges.id, ids), eq(edges.status, 'offline')))
      .all();
    return rows.map((r) => r.id);
  }

  /**
   * A cloud without Redis is one process, and it holds no tunnel before it listens: every
   * edge still marked online was left so by a crash. Returns their ids, now offline.
   */
  async markAllOffline(): Promise<number[]> {
    const rows = await this.db
      .update(edges)
      .set({ status: 'offline', updatedAt: now() })
      .where(eq(edges.status, 'online'))
      .returning({ id: edges.id })
      .all();
    return rows.map((r) => r.id);
  }

  /** Cloud replicas (not revoked) seen within FLEET_ALIVE_MS of `at`. */
  async cloudFleet(at = new Date()): Promise<Edge[]> {
    const since = new Date(at.getTime() - FLEET_ALIVE_MS).toISOString();
    const rows = await this.db
      .select()
      .from(edges)
      .where(and(eq(edges.location, 'cloud'), ne(edges.status, 'revoked'), gte(edges.lastSeenAt, since)))
      .orderBy(asc(edges.id))
      .all();
    return rows.map(toEdge);
  }

  /** True when the MQTT credentials are the ones last issued to a (non-revoked) edge. */
  async verifyMqttCredentials(username: string, password: string): Promise<Edge | null> {
    const row = await this.db.select().from(edges).where(eq(edges.mqttUsername, username)).get();
    if (!row || row.status === 'revoked' || !row.mqttPasswordHash || !safeEqual(row.mqttPasswordHash, sha256(password)))
      return null;
    return toEdge(row);
  }

  /** Heartbeat: last_seen_at = now. Returns null for an unknown or revoked edge. */
  async touch(id: number): Promise<Edge | null> {
    const at = now();
    const row = await this.db
      .update(edges)
      .set({ lastSeenAt: at, updatedAt: at })
      .where(and(eq(edges.id, id), ne(edges.status, 'revoked')))
      .returning()
      .get();
    return row ? toEdge(row) : null;
  }

  /**
   * For the tunnel: connected → 'online', paired_at set on the first connection. Unnoticed by
   * the access cache (and the other replicas'): no grant depends on online/offline, only on
   * revoked, which this never writes.
   */
  async markOnline(id: number): Promise<Edge | null> {
    return this.database.unnoticed(async () => {
      const q = this.tunnelQueries();
      const current = await q.byId.get({ id });
      if (!current || current.status === 'revoked') return null;
      const at = now();
      const row = await q.setOnline.get({ id, at, pairedAt: current.pairedAt ?? at });
      return row ? toEdge(row) : null;
    });
  }

  /**
   * markOnline and markOffline of many edges in one transaction (the tunnel's connects and
   * disconnects of one tick: a reconnect storm's thousands of marks are a few commits, not one
   * each). Revoked edges stay revoked. Unnoticed, as markOnline.
   */
  async markTunnels(online: readonly number[], offline: readonly number[]): Promise<void> {
    if (online.length === 0 && offline.length === 0) return;
    const at = now();
    // plain SQL, as edgeIdsByTokens
    await this.database.unnoticed(() =>
      this.database.atomic(async () => {
        if (online.length > 0)
          await this.database.execute(
            `UPDATE edges SET status = 'online', paired_at = COALESCE(paired_at, ?), last_seen_at = ?, updated_at = ?
             WHERE id IN (${placeholders(online.length)}) AND status <> 'revoked'`,
            [at, at, at, ...online],
          );
        if (offline.length > 0)
          await this.database.execute(
            `UPDATE edges SET status = 'offline', updated_at = ? WHERE id IN (${placeholders(offline.length)}) AND status <> 'revoked'`,
            [at, ...offline],
          );
      }),
    );
  }

  /** For the tunnel: disconnected → 'offline' (a revoked edge stays revoked). Unnoticed, as markOnline. */
  async markOffline(id: number): Promise<Edge | null> {
    return this.database.unnoticed(async () => {
      const row = await this.tunnelQueries().setOffline.get({ id, at: now() });
      return row ? toEdge(row) : null;
    });
  }
}

function buildTunnelQueries(db: Db) {
  const id = sql.placeholder('id');
  const at = sql.placeholder('at');
  const notRevoked = and(eq(edges.id, id), ne(edges.status, 'revoked'));
  return {
    byTokenHash: db
      .select()
      .from(edges)
      .where(eq(edges.tokenHash, sql.placeholder('hash')))
      .prepare(),
    byId: db.select().from(edges).where(eq(edges.id, id)).prepare(),
    setOnline: db
      .update(edges)
      .set({
        status: 'online',
        pairedAt: sql`${sql.placeholder('pairedAt')}`,
        lastSeenAt: sql`${at}`,
        updatedAt: sql`${at}`,
      })
      .where(notRevoked)
      .returning()
      .prepare(),
    setOffline: db
      .update(edges)
      .set({ status: 'offline', updatedAt: sql`${at}` })
      .where(notRevoked)
      .returning()
      .prepare(),
  };
}
