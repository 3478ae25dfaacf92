import { routes } from '@smarthome/protocol';
import type { CloudRouter } from '../context.ts';
import { userOf } from '../http/route-inputs.ts';
import { resolveScope } from '../orgs/scope.ts';
import { listPlans, subscriptionsOf, usageOf, type BillingDeps } from './plans.ts';

export function mountBillingRoutes(router: CloudRouter, s: BillingDeps): void {
  router.add(routes.billingUsageRoute, async ({ auth, c }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    return usageOf(s, scope);
  });

  router.add(routes.billingSubscriptionsRoute, async ({ auth }) => subscriptionsOf(s.database.db, userOf(auth)));

  router.add(routes.billingPlansRoute, async ({ auth }) => {
    userOf(auth);
    return listPlans(s.database.db);
  });
}
