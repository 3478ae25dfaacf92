import { and, asc, desc, eq, inArray, ne } from 'drizzle-orm';
import type { CountedKind, Subscription, Usage } from '@smarthome/protocol';
import { planLimitReached } from '@smarthome/protocol/server';
import type { CloudDatabase, Db } from '../db/database.ts';
import type { Scope } from '../orgs/scope.ts';
import { orgMembers } from '../orgs/tables.ts';
import { edges } from '../edges/tables.ts';
import { edgeScopeCondition } from '../edges/registry.ts';
import type { MirrorStore } from '../mirror/store.ts';
import { FREE_PLAN_ID, plans, subscriptions } from './tables.ts';

export interface PlanInfo {
  id: number;
  name: string;
  limits: Record<CountedKind, number | null>;
}

/** Subscription statuses that grant their plan (grace_period: the store is still retrying the payment). */
export const ENTITLED_STATUSES = ['active', 'grace_period'] as const;

type PlanRow = typeof plans.$inferSelect;
const toPlan = (p: PlanRow): PlanInfo => ({
  id: p.id,
  name: p.name,
  limits: { config_entries: p.configEntriesLimit, devices: p.devicesLimit, automations: p.automationsLimit },
});

export async function listPlans(db: Db): Promise<PlanInfo[]> {
  return (await db.select().from(plans).orderBy(asc(plans.rank)).all()).map(toPlan);
}

/**
 * The plan in force for a scope. Personal scope: the best plan among the user's entitled
 * (active or grace_period) subscriptions, else free. Organization scope: the best plan any
 * of the organization's admins holds that way (admins pay for the workspace), else free.
 * "Best" is the highest plan rank. Status is authoritative (the store receiver moves it
 * to expired), so expires_at is not consulted here.
 */
export async function effectivePlan(db: Db, scope: Scope): Promise<PlanInfo> {
  const payers =
    scope.kind === 'org'
      ? db
          .select({ userId: orgMembers.userId })
          .from(orgMembers)
          .where(and(eq(orgMembers.orgId, scope.orgId), eq(orgMembers.role, 'admin')))
      : [scope.userId];
  const best = await db
    .select({ plan: plans })
    .from(subscriptions)
    .innerJoin(plans, eq(plans.id, subscriptions.planId))
    .where(and(inArray(subscriptions.userId, payers), inArray(subscriptions.status, [...ENTITLED_STATUSES])))
    .orderBy(desc(plans.rank))
    .limit(1)
    .get();
  if (best) return toPlan(best.plan);
  const free = await db.select().from(plans).where(eq(plans.id, FREE_PLAN_ID)).get();
  if (!free) throw new Error('free plan missing (billing migration not applied)');
  return toPlan(free);
}

/** Ids of the scope's edges that count for billing (revoked edges do not). */
export async function billableEdgeIds(db: Db, scope: Scope): Promise<number[]> {
  const rows = await db
    .select({ id: edges.id })
    .from(edges)
    .where(and(edgeScopeCondition(scope), ne(edges.status, 'revoked')))
    .all();
  return rows.map((r) => r.id);
}

export interface BillingDeps {
  database: CloudDatabase;
  mirror: MirrorStore;
}

/** Counts of config entries, devices and automations of the scope (from the mirror) against its plan. */
export async function usageOf(s: BillingDeps, scope: Scope): Promise<Usage> {
  const db = s.database.db;
  const plan = await effectivePlan(db, scope);
  const counts = await s.mirror.counts(await billableEdgeIds(db, scope));
  const counter = (kind: CountedKind) => ({ current: counts[kind], limit: plan.limits[kind] });
  return {
    plan: { id: plan.id, name: plan.name },
    usage: {
      config_entries: counter('config_entries'),
      devices: counter('devices'),
      automations: counter('automations'),
    },
  };
}

/**
 * Throws 403 {error:"plan_limit_reached"} when creating `adding` more of `kind` in the scope
 * would exceed its plan's limit. Call it before creating a counted thing.
 */
export async function assertWithinLimit(s: BillingDeps, scope: Scope, kind: CountedKind, adding = 1): Promise<void> {
  const usage = await usageOf(s, scope);
  const { current, limit } = usage.usage[kind];
  if (limit !== null && current + adding > limit) throw planLimitReached();
}

type SubscriptionRow = typeof subscriptions.$inferSelect;
export function toSubscription(r: SubscriptionRow): Subscription {
  return {
    id: r.id,
    plan_id: r.planId,
    status: r.status,
    gateway_provider: r.gatewayProvider,
    auto_renew: r.autoRenew,
    expires_at: r.expiresAt,
    pending_plan_id: r.pendingPlanId,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/** The user's subscriptions, newest first. */
export async function subscriptionsOf(db: Db, userId: string): Promise<Subscription[]> {
  const rows = await db
    .select()
    .from(subscriptions)
    .where(eq(subscriptions.userId, userId))
    .orderBy(desc(subscriptions.createdAt), asc(subscriptions.id))
    .all();
  return rows.map(toSubscription);
}
