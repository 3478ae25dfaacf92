import { z } from 'zod';

export const StoreNotificationBody = z
  .object({ signedPayload: z.string().min(1).max(100_000) })
  .meta({ id: 'StoreNotification' });
export const StoreNotificationResult = z
  .object({ status: z.literal(true), message: z.string() })
  .meta({ id: 'StoreNotificationResult' });

/** Decoded App Store Server Notification v2 payload (the parts we act on). */
export const NotificationPayload = z.looseObject({
  notificationType: z.string(),
  subtype: z.string().optional(),
  notificationUUID: z.string(),
  version: z.string().optional(),
  signedDate: z.number(),
  data: z
    .looseObject({
      bundleId: z.string().optional(),
      environment: z.enum(['Production', 'Sandbox']).optional(),
      signedTransactionInfo: z.string().optional(),
      signedRenewalInfo: z.string().optional(),
    })
    .optional(),
  /** Present instead of `data` on summary notifications (RENEWAL_EXTENSION). */
  summary: z
    .looseObject({
      bundleId: z.string().optional(),
      environment: z.enum(['Production', 'Sandbox']).optional(),
    })
    .optional(),
});
export const TransactionInfo = z.looseObject({
  originalTransactionId: z.string(),
  transactionId: z.string().optional(),
  productId: z.string(),
  bundleId: z.string().optional(),
  appAccountToken: z.string().optional(),
  expiresDate: z.number().optional(),
  purchaseDate: z.number().optional(),
  environment: z.enum(['Production', 'Sandbox']).optional(),
  signedDate: z.number().optional(),
  revocationDate: z.number().optional(),
  type: z.string().optional(),
});
export const RenewalInfo = z.looseObject({
  originalTransactionId: z.string().optional(),
  autoRenewStatus: z.number().optional(),
  autoRenewProductId: z.string().optional(),
  productId: z.string().optional(),
  gracePeriodExpiresDate: z.number().optional(),
  renewalDate: z.number().optional(),
  environment: z.enum(['Production', 'Sandbox']).optional(),
  signedDate: z.number().optional(),
});
export type NotificationPayload = z.infer<typeof NotificationPayload>;
export type TransactionInfo = z.infer<typeof TransactionInfo>;
export type RenewalInfo = z.infer<typeof RenewalInfo>;
