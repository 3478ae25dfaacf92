import { normalizeEmail } from '@smarthome/protocol';

/** What the claim decision needs to know about an account. */
export interface Claimant {
  email: string;
  /** ISO 8601, when the account was registered */
  createdAt: string;
}

/** Something sent to an e-mail address (a transfer, an invitation). */
export interface AddressedOffer {
  email: string;
  /** ISO 8601, when it was sent */
  sentAt: string;
}

export type ClaimRefusal = 'address_mismatch' | 'account_created_after_offer';

/**
 * May this account claim what was sent to this address? The single place that decides it:
 * null when it may, else why not.
 *
 * Nobody proves they own an address yet, so whoever registers an unregistered address
 * could claim what was sent to it. Until e-mail verification exists, only an account that
 * already existed when the offer was sent may claim it (an account registered in the same
 * millisecond counts as existing). Once addresses are verified, the second rule becomes
 * "the account's address is verified".
 */
export function claimRefusal(account: Claimant, offer: AddressedOffer): ClaimRefusal | null {
  if (normalizeEmail(account.email) !== normalizeEmail(offer.email)) return 'address_mismatch';
  if (!(Date.parse(account.createdAt) <= Date.parse(offer.sentAt))) return 'account_created_after_offer';
  return null;
}

export const mayClaim = (account: Claimant, offer: AddressedOffer): boolean => claimRefusal(account, offer) === null;
