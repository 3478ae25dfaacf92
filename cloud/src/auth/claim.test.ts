import { describe, expect, it } from 'vitest';
import { Email } from '@smarthome/protocol';
import { claimRefusal, mayClaim } from './claim.ts';

describe('mayClaim: who may claim what was sent to an e-mail address', () => {
  it('an account whose verified address matches, in any case or Unicode compatibility form', () => {
    expect(mayClaim({ email: 'Bob@Example.test', emailVerified: true }, { email: 'bob@example.test' })).toBe(true);
    // fullwidth letters and the Kelvin sign fold to their ASCII letters under NFKC
    expect(mayClaim({ email: 'ｂob@example.test', emailVerified: true }, { email: 'bob@example.test' })).toBe(true);
    expect(mayClaim({ email: 'kim@example.test', emailVerified: true }, { email: '\u212Aim@example.test' })).toBe(true);
  });

  it('not an account whose matching address is unverified, nor another address', () => {
    expect(claimRefusal({ email: 'bob@example.test', emailVerified: false }, { email: 'bob@example.test' })).toBe(
      'email_not_verified',
    );
    expect(claimRefusal({ email: 'bob@example.test', emailVerified: true }, { email: 'bob2@example.test' })).toBe(
      'address_mismatch',
    );
    expect(claimRefusal({ email: 'bob@example.test', emailVerified: false }, { email: 'bob2@example.test' })).toBe(
      'address_mismatch',
    );
  });

  it('the Email schema stores addresses in the form mayClaim compares', () => {
    expect(Email.parse('Bob.Smith@Example.TEST')).toBe('bob.smith@example.test');
  });
});
