import type { Scope } from '../orgs/scope.ts';

/**
 * Whether a row belongs to the request's scope: the organization's rows in org scope,
 * the caller's own personal rows (org_id null) in personal scope.
 */
export function inScope(row: { userId: string; orgId: string | null }, scope: Scope): boolean {
  return scope.orgId ? row.orgId === scope.orgId : row.orgId === null && row.userId === scope.userId;
}
