/**
 * Persistence + idempotency for the store receiver, written against a small repository
 * interface; the database implementation is repository.ts, the route routes.ts.
 * HttpErrors thrown here carry `shape: 'error'`, so the shared error handler
 * (installErrorHandling) answers 400 `{error}`.
 */
import { randomUUID } from 'node:crypto';
import { HttpError } from '@smarthome/protocol/server';
import { applyNotification, type LifecycleOutcome, type PlanMap, type StoreSubscriptionState } from './lifecycle.ts';
import { StoreVerificationError, type StoreVerifier, type VerifiedNotification } from './verify.ts';

export type NotificationOutcome = LifecycleOutcome | 'rejected';

export interface NotificationRecord {
  /** notificationUUID; null for rejected notifications (their UUID is unverified and must not block the real one). */
  uuid: string | null;
  type: string | null;
  subtype: string | null;
  outcome: NotificationOutcome;
  /** Rejection reason (StoreVerificationError.reason) or null. */
  reason: string | null;
  original_transaction_id: string | null;
  signed_date: number | null;
  received_at: string;
}

export interface IapRepository {
  findByOriginalTransactionId(originalTransactionId: string): Promise<StoreSubscriptionState | null>;
  upsertSubscription(state: StoreSubscriptionState): Promise<void>;
  /**
   * Appends an audit record. For a non-null uuid it is insert-if-absent (unique on uuid):
   * returns true when that uuid was already recorded (nothing inserted), false otherwise.
   * Records with uuid null are always inserted and return false.
   */
  recordNotification(record: NotificationRecord): Promise<boolean>;
  findUserIdByAppAccountToken(appAccountToken: string): Promise<string | null>;
  /**
   * Optional: runs `fn` in one database transaction so that the uuid record and the
   * subscription change commit together (a crash between them must not lose a notification).
   */
  transaction?<T>(fn: (repo: IapRepository) => Promise<T>): Promise<T>;
}

export interface StoreNotificationDeps {
  verifier: StoreVerifier;
  repo: IapRepository;
  planByProductId: PlanMap;
  now?: () => Date;
  newId?: () => string;
  /** Called with rejected notifications' errors (logging). */
  onRejected?: (error: StoreVerificationError) => void;
}

export interface StoreNotificationResult {
  status: true;
  message: string;
  /** Not part of the wire body; for logs and tests. */
  outcome: LifecycleOutcome | 'duplicate';
  subscription: StoreSubscriptionState | null;
}

/** The receiver's 400: body `{error}` (not the general `{message}`). */
export const storeError = (message: string, cause?: unknown) => new HttpError(400, message, { cause, shape: 'error' });

/** The body's signedPayload, or a 400 `{error}` when it is missing, empty or too large. */
export function requireSignedPayload(body: unknown): string {
  const signedPayload =
    typeof body === 'object' && body !== null ? (body as { signedPayload?: unknown }).signedPayload : undefined;
  if (typeof signedPayload !== 'string' || signedPayload.length === 0) throw storeError('missing signedPayload');
  if (signedPayload.length > 100_000) throw storeError('signedPayload too large');
  return signedPayload;
}

/**
 * Handles one POST /v1/webhooks/store-iap body. Returns the success body (plus `outcome`
 * and `subscription`, which the route should not send: use `toWireBody`). Throws HttpError 400
 * with an `{error}` body for a missing signedPayload or a failed verification; nothing changes then.
 */
export async function handleStoreNotification(
  body: unknown,
  deps: StoreNotificationDeps,
): Promise<StoreNotificationResult> {
  const now = deps.now ?? (() => new Date());
  const signedPayload = requireSignedPayload(body);

  let verified: VerifiedNotification;
  try {
    verified = await deps.verifier.verifyNotification(signedPayload);
  } catch (err) {
    if (!(err instanceof StoreVerificationError)) throw err;
    deps.onRejected?.(err);
    await deps.repo.recordNotification({
      uuid: null,
      type: null,
      subtype: null,
      outcome: 'rejected',
      reason: `${err.where}: ${err.reason}`,
      original_transaction_id: null,
      signed_date: null,
      received_at: now().toISOString(),
    });
    throw storeError(`invalid signedPayload: ${err.reason}`, err);
  }

  const { payload, transaction } = verified;
  const run = async (repo: IapRepository): Promise<StoreNotificationResult> => {
    const current = transaction ? await repo.findByOriginalTransactionId(transaction.originalTransactionId) : null;
    const userId = transaction?.appAccountToken
      ? await repo.findUserIdByAppAccountToken(transaction.appAccountToken)
      : null;
    const at = now();
    const result = applyNotification(current, verified, {
      planByProductId: deps.planByProductId,
      now: at,
      newId: deps.newId ?? randomUUID,
      userId,
    });
    const alreadySeen = await repo.recordNotification({
      uuid: payload.notificationUUID,
      type: payload.notificationType,
      subtype: payload.subtype ?? null,
      outcome: result.outcome,
      reason: null,
      original_transaction_id: transaction?.originalTransactionId ?? null,
      signed_date: payload.signedDate,
      received_at: at.toISOString(),
    });
    if (alreadySeen) return { status: true, message: 'already processed', outcome: 'duplicate', subscription: current };
    if (result.outcome === 'applied' && result.state) await repo.upsertSubscription(result.state);
    return {
      status: true,
      message: result.outcome === 'applied' ? 'applied' : `accepted (${result.outcome})`,
      outcome: result.outcome,
      subscription: result.state,
    };
  };
  return deps.repo.transaction ? deps.repo.transaction(run) : run(deps.repo);
}

/** The success body the route sends: `{status: true, message}`. */
export function toWireBody(result: StoreNotificationResult): { status: true; message: string } {
  return { status: result.status, message: result.message };
}

/** In-memory IapRepository for tests (and a reference for the database implementation). */
export class InMemoryIapRepository implements IapRepository {
  readonly subscriptions = new Map<string, StoreSubscriptionState>();
  readonly notifications: NotificationRecord[] = [];
  readonly usersByToken = new Map<string, string>();
  private readonly seen = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();

  async findByOriginalTransactionId(originalTransactionId: string): Promise<StoreSubscriptionState | null> {
    const state = this.subscriptions.get(originalTransactionId);
    return state ? { ...state } : null;
  }
  async upsertSubscription(state: StoreSubscriptionState): Promise<void> {
    this.subscriptions.set(state.original_transaction_id, { ...state });
  }
  async recordNotification(record: NotificationRecord): Promise<boolean> {
    if (record.uuid !== null && this.seen.has(record.uuid)) return true;
    if (record.uuid !== null) this.seen.add(record.uuid);
    this.notifications.push({ ...record });
    return false;
  }
  async findUserIdByAppAccountToken(appAccountToken: string): Promise<string | null> {
    return this.usersByToken.get(appAccountToken.toLowerCase()) ?? null;
  }
  /** Serialises handlers (stands in for a database transaction). */
  transaction<T>(fn: (repo: IapRepository) => Promise<T>): Promise<T> {
    const result = this.queue.then(() => fn(this));
    this.queue = result.catch(() => undefined);
    return result;
  }
  subscriptionsOfUser(userId: string): StoreSubscriptionState[] {
    return [...this.subscriptions.values()].filter((s) => s.user_id === userId);
  }
}
