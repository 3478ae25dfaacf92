/**
 * Which plan an App Store product grants (STORE_IAP_PRODUCT_PLANS).
 *
 * Configured: a JSON object productId → plan id, authoritative (a product not listed is an
 * unknown product: the notification is recorded as `unknown_product` and changes nothing).
 * Not configured: any productId containing "business" (case-insensitive) → 3 (business),
 * any other → 2 (pro).
 */
import type { PlanMap } from './lifecycle.ts';

export const DEFAULT_PRO_PLAN_ID = 2;
export const DEFAULT_BUSINESS_PLAN_ID = 3;

/** Parses STORE_IAP_PRODUCT_PLANS. Throws an Error naming the variable when it is not a JSON object of positive integers. */
export function parseProductPlans(text: string): Record<string, number> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('STORE_IAP_PRODUCT_PLANS must be a JSON object (productId → plan id)');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error('STORE_IAP_PRODUCT_PLANS must be a JSON object (productId → plan id)');
  }
  const out: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const [productId, plan] of Object.entries(value)) {
    if (typeof plan !== 'number' || !Number.isInteger(plan) || plan < 1) {
      throw new Error(`STORE_IAP_PRODUCT_PLANS: plan id of ${productId} must be a positive integer`);
    }
    out[productId] = plan;
  }
  return out;
}

/** The default mapping used when STORE_IAP_PRODUCT_PLANS is not set. */
export function defaultPlanOfProduct(productId: string): number {
  return /business/i.test(productId) ? DEFAULT_BUSINESS_PLAN_ID : DEFAULT_PRO_PLAN_ID;
}

/** The PlanMap for the receiver: the configured table, else the default rule. */
export function productPlanMap(configured: Readonly<Record<string, number>> | undefined): PlanMap {
  return configured ?? defaultPlanOfProduct;
}
