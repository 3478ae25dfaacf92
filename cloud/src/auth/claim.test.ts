import { describe, expect, it } from 'vitest';
import { Email } from '@smarthome/protocol';
import { claimRefusal, mayClaim } from './claim.ts';

const registered = '2026-01-01T10:00:00.000Z';

describe('mayClaim: who may claim what was sent to an e-mail address', () => {
  it('an account that existed when the offer was sent, with the address in any case or Unicode compatibility form', () => {
    expect(mayClaim({ email: 'Bob@Example.test', createdAt: registered }, { email: 'bob@example.test', sentAt: '2026-01-02T00:00:00.000Z' })).toBe(true);
    // fullwidth letters and the Kelvin sign fold to their ASCII letters under NFKC
    expect(mayClaim({ email: 'ｂob@example.test', createdAt: registered }, { email: 'bob@example.test', sentAt: registered })).toBe(true);
    expect(mayClaim({ email: 'kim@example.test', createdAt: registered }, { email: '\u212Aim@example.test', sentAt: registered })).toBe(true);
  });

  it('not an account registered after the offer was sent, nor another address', () => {
    expect(claimRefusal({ email: 'bob@example.test', createdAt: registered }, { email: 'bob@example.test', sentAt: '2026-01-01T09:59:59.999Z' }))
      .toBe('account_created_after_offer');
    expect(claimRefusal({ email: 'bob@example.test', createdAt: registered }, { email: 'bob2@example.test', sentAt: '2026-02-01T00:00:00.000Z' }))
      .toBe('address_mismatch');
    expect(mayClaim({ email: 'bob@example.test', createdAt: 'garbage' }, { email: 'bob@example.test', sentAt: registered })).toBe(false);
  });

  it('the Email schema stores addresses in the form mayClaim compares', () => {
    expect(Email.parse('Bob.Smith@Example.TEST')).toBe('bob.smith@example.test');
  });
});
