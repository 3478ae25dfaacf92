import { normalizeEmail } from '@smarthome/protocol';

/** What the claim decision needs to know about an account. */
export interface Claimant {
  email: string;
  /** the account's owner followed a link sent to `email` */
  emailVerified: boolean;
}

/** Something sent to an e-mail address (a transfer, an invitation). */
export interface AddressedOffer {
  email: string;
}

export type ClaimRefusal = 'address_mismatch' | 'email_not_verified';

/**
 * May this account claim what was sent to this address? The single place that decides it:
 * null when it may, else why not. The account's address must equal the offer's (compared
 * Unicode-NFKC-normalised and case-insensitively) and be verified: whoever registers an
 * address without owning its mailbox never gets what was sent to it, whenever they registered.
 */
export function claimRefusal(account: Claimant, offer: AddressedOffer): ClaimRefusal | null {
  if (normalizeEmail(account.email) !== normalizeEmail(offer.email)) return 'address_mismatch';
  if (!account.emailVerified) return 'email_not_verified';
  return null;
}

export const mayClaim = (account: Claimant, offer: AddressedOffer): boolean => claimRefusal(account, offer) === null;
