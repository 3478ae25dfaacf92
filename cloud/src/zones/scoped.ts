import type { Scope } from '../orgs/scope.ts';

/**
 * Whether a row belongs to the request's scope: the organization's rows in org scope,
 * the caller's own personal rows (org_id null) in personal scope.
 */
export function inScope(row: { userId: string; orgId: string | null }, scope: Scope): boolean {
  return scope.orgId ? row.orgId === scope.orgId : row.orgId === null && row.userId === scope.userId;
}

/** A path id that passed IntIdParam, or null when it cannot name a row (beyond the safe integer range). */
export function rowId(param: string): number | null {
  const n = Number(param);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}
