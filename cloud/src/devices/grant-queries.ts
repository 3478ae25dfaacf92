import { and, eq, inArray, isNull, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { edges } from '../edges/tables.ts';
import { orgMembers } from '../orgs/tables.ts';
import { shares } from '../authz/shares-table.ts';
import { usableOrgIds } from '../orgs/mfa-policy.ts';

/**
 * The access checks every edge-backed request makes, prepared once: building drizzle's SQL was
 * half of the cost of a cached GET /v1/entities/states. Same conditions as written inline,
 * with the variable lists (the user's organizations) as subqueries.
 */
export function grantQueries(db: Db) {
  const userId = sql.placeholder('userId');
  const orgId = sql.placeholder('orgId');
  // the user's organizations, less those requiring MFA of a user without it (orgs/mfa-policy.ts)
  const userOrgs = usableOrgIds(db, userId);
  // The caller's role in the edge's organization comes along (null for a personal edge).
  const edgeColumns = { id: edges.id, orgId: edges.orgId, userId: edges.userId, role: orgMembers.role };
  const withRole = and(eq(orgMembers.orgId, edges.orgId), eq(orgMembers.userId, userId));
  const entityShares = and(eq(shares.resourceType, 'entity'), or(isNull(shares.userId), eq(shares.userId, userId)));
  return {
    /**
     * the user's personal edges and those of every organization the user belongs to: two
     * selects, each on an index of edges (one condition with OR across the join scanned the
     * whole table, and every app socket's visibility reloads it every few seconds)
     */
    reachableEdges: db
      .select({ ...edgeColumns, role: sql<string | null>`NULL`.as('role') })
      .from(edges)
      .where(and(ne(edges.status, 'revoked'), eq(edges.userId, userId), isNull(edges.orgId)))
      .unionAll(
        db
          .select(edgeColumns)
          .from(edges)
          .innerJoin(orgMembers, withRole)
          .where(and(ne(edges.status, 'revoked'), inArray(edges.orgId, userOrgs))),
      )
      .prepare(),
    /** one organization's edges, if the user belongs to it */
    orgEdges: db
      .select(edgeColumns)
      .from(edges)
      .innerJoin(orgMembers, withRole)
      .where(and(ne(edges.status, 'revoked'), eq(edges.orgId, orgId), inArray(edges.orgId, userOrgs)))
      .prepare(),
    sharesInUserOrgs: db
      .select()
      .from(shares)
      .where(and(entityShares, inArray(shares.orgId, userOrgs)))
      .prepare(),
    sharesInOrg: db
      .select()
      .from(shares)
      .where(and(entityShares, eq(shares.orgId, orgId), inArray(shares.orgId, userOrgs)))
      .prepare(),
    /** where a share applies: the organization's edges and the sharing admin's personal ones */
    shareEdges: db
      .select({ id: edges.id })
      .from(edges)
      .where(
        and(
          ne(edges.status, 'revoked'),
          or(eq(edges.orgId, orgId), and(eq(edges.userId, sql.placeholder('createdBy')), isNull(edges.orgId))),
        ),
      )
      .prepare(),
  };
}

export type GrantQueries = ReturnType<typeof grantQueries>;
