import { defineRoute } from '../route.ts';
import { StoreNotificationBody, StoreNotificationResult } from '../store-iap.ts';

/**
 * App Store Server Notifications v2. No Authorization header: the signature is inside the JWS.
 * Its 400 body is `{error}` (portal-api.md, Errors rule 5), unlike the general 400 `{message}`.
 * The receiver reads the body itself (a missing body or signedPayload is its own 400 `{error}`).
 */
export const storeIapNotificationRoute = defineRoute({
  method: 'post',
  path: '/v1/webhooks/store-iap',
  summary: 'Receiver of app-store subscription notifications (signed JWS in signedPayload)',
  tag: 'billing',
  auth: 'none',
  body: StoreNotificationBody,
  readBody: 'manual',
  status: 200,
  response: StoreNotificationResult,
  errors: [400, 413],
  errorShapes: { 400: 'error' },
});
