import { EVERYONE, NOT_M, type Entry } from './types.ts';

/** Matrix entries of sign-in and the caller's own account: registration, tokens, passwords, MFA, sessions. */

export const ACCOUNT_ENTRIES: Record<string, Entry> = {
  'GET /healthz': { exempt: 'public', reason: 'health check: no data, no resource' },
  'POST /v1/auth/register': { exempt: 'public', reason: 'creates a new account; names nothing that exists' },
  'POST /v1/auth/token': {
    exempt: 'public',
    reason: 'the credentials in the body are the authorization (throttling and refresh-token reuse: cloud/src/auth)',
  },
  'GET /v1/account': { lists: () => [{ path: '/v1/account', sees: ['A', 'mx O org'] }] },
  'POST /v1/account/tokens': {
    exempt: 'self-scoped',
    reason: "creates a token of the caller's own; the body names nothing else",
  },
  'GET /v1/account/tokens': { lists: () => [{ path: '/v1/account/tokens', sees: ['A', 'mx A pat'] }] },
  'DELETE /v1/account/tokens/{id}': {
    probes: (x) => [
      {
        what: "A's PAT",
        path: `/v1/account/tokens/${x.w.a.pat}`,
        deny: EVERYONE,
        snapshot: () => x.read('A', '/v1/account/tokens'),
      },
      {
        what: "M's PAT",
        path: `/v1/account/tokens/${x.w.m.pat}`,
        deny: NOT_M,
        snapshot: () => x.read('M', '/v1/account/tokens'),
      },
    ],
  },
  'POST /v1/account/mfa/backup-codes': {
    exempt: 'self-scoped',
    reason: "replaces the caller's own codes, verified with the caller's own password",
  },
  'POST /v1/account/password': {
    exempt: 'self-scoped',
    reason: "changes the caller's own password, verified with the current one",
  },
  'POST /v1/auth/verify-email': {
    exempt: 'public',
    reason:
      'the single-use 256-bit token from the mail is the authorization; it names the address it was sent to, nothing else',
  },
  'POST /v1/auth/password-reset': {
    exempt: 'public',
    reason:
      'names only an e-mail address; the answer is the same whether it has an account (mail goes only to that address)',
  },
  'POST /v1/auth/password-reset/confirm': {
    exempt: 'public',
    reason: 'the single-use 256-bit token from the mail is the authorization',
  },
  'POST /v1/account/email/verification': {
    exempt: 'self-scoped',
    reason: "sends a verification mail to the caller's own address",
  },
  'POST /v1/account/mfa/totp': {
    exempt: 'self-scoped',
    reason: "enrols the caller's own TOTP, verified with the caller's own password",
  },
  'POST /v1/account/mfa/totp/confirm': {
    exempt: 'self-scoped',
    reason: "confirms the caller's own pending enrolment with a code of its secret",
  },
  'POST /v1/account/mfa/totp/disable': {
    exempt: 'self-scoped',
    reason: "disables the caller's own TOTP, verified with the password and a code",
  },
  'PUT /v1/account/notifications': { exempt: 'self-scoped', reason: "sets the caller's own mail preferences" },
  'GET /v1/account/sessions': {
    exempt: 'self-scoped',
    reason: "lists the caller's own sessions (sessions.test.ts: another user's are not listed)",
  },
  'DELETE /v1/account/sessions/{id}': {
    exempt: 'self-scoped',
    reason: "looks the id up among the caller's own live sessions; another user's answers 404 (sessions.test.ts)",
  },
  'DELETE /v1/account/sessions': { exempt: 'self-scoped', reason: "ends the caller's own other sessions" },
  'POST /v1/account/email': {
    exempt: 'self-scoped',
    reason: "changes the caller's own address, verified with the current password",
  },
};
