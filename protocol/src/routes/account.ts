import { z } from 'zod';
import { defineRoute } from '../route.ts';
import {
  ChangeEmailBody,
  PasswordResetBody,
  PasswordResetConfirmBody,
  TotpConfirmBody,
  TotpDisableBody,
  TotpEnrolment,
  VerifyEmailBody,
} from '../auth.ts';
import { MessageBody } from '../common.ts';
import { AccountNotifications, Session } from '../auth.ts';

/** Extra endpoints (not in the published spec): verified addresses and password reset. */
const language = z.object({
  'accept-language': z.string().optional().meta({ description: 'the language of the mail (en, de; default en)' }),
});

export const verifyEmailRoute = defineRoute({
  method: 'post',
  path: '/v1/auth/verify-email',
  tag: 'auth',
  auth: 'none',
  summary:
    'Follow a verification link: the address it was sent to becomes verified (single use, 48 hours; 400 otherwise)',
  body: VerifyEmailBody,
  status: 200,
  response: MessageBody,
  errors: [400, 413],
});
export const resendVerificationRoute = defineRoute({
  method: 'post',
  path: '/v1/account/email/verification',
  tag: 'account',
  auth: 'bearer',
  headers: language,
  summary: 'Send another verification mail (409 when already verified; 5 per hour, then 429)',
  status: 202,
  response: MessageBody,
  errors: [401, 409, 429],
});
export const changeEmailRoute = defineRoute({
  method: 'post',
  path: '/v1/account/email',
  tag: 'account',
  auth: 'bearer',
  summary: 'Change the address (unverified until the link sent to it is followed)',
  headers: language.extend({ 'x-account-verification': z.string().meta({ description: 'the current password' }) }),
  body: ChangeEmailBody,
  status: 202,
  response: MessageBody,
  errors: [400, 401, 403, 409, 413, 429],
});
export const passwordResetRoute = defineRoute({
  method: 'post',
  path: '/v1/auth/password-reset',
  tag: 'auth',
  auth: 'none',
  headers: language,
  summary: 'Ask for a password reset link (the same answer whether the address has an account or not; throttled)',
  body: PasswordResetBody,
  status: 202,
  response: MessageBody,
  errors: [400, 413, 429],
});
export const passwordResetConfirmRoute = defineRoute({
  method: 'post',
  path: '/v1/auth/password-reset/confirm',
  tag: 'auth',
  auth: 'none',
  summary:
    'Set a new password with a reset link (single use, 30 minutes): every sign-in session ends, app WebSockets included',
  body: PasswordResetConfirmBody,
  status: 200,
  response: MessageBody,
  errors: [400, 413],
});

const password = z.object({ 'x-account-verification': z.string().meta({ description: 'the current password' }) });
export const totpEnrolRoute = defineRoute({
  method: 'post',
  path: '/v1/account/mfa/totp',
  tag: 'account',
  auth: 'bearer',
  headers: password,
  summary:
    'Start TOTP enrolment: a new secret as an otpauth:// URI and a QR code (SVG); enabled once confirmed with a first code (409 when enabled)',
  status: 200,
  response: TotpEnrolment,
  errors: [401, 403, 409, 429],
});
export const totpConfirmRoute = defineRoute({
  method: 'post',
  path: '/v1/account/mfa/totp/confirm',
  tag: 'account',
  auth: 'bearer',
  summary:
    'Confirm TOTP enrolment with a first code: from then on the password grant needs mfa_code (a TOTP code or a backup code, each once)',
  body: TotpConfirmBody,
  status: 200,
  response: MessageBody,
  errors: [400, 401, 409, 413, 429],
});
export const totpDisableRoute = defineRoute({
  method: 'post',
  path: '/v1/account/mfa/totp/disable',
  tag: 'account',
  auth: 'bearer',
  headers: password,
  summary: 'Disable TOTP (the password and a current code or a backup code)',
  body: TotpDisableBody,
  status: 200,
  response: MessageBody,
  errors: [400, 401, 403, 409, 413, 429],
});

export const listSessionsRoute = defineRoute({
  method: 'get',
  path: '/v1/account/sessions',
  tag: 'account',
  auth: 'bearer',
  summary: 'Active sign-in sessions (refresh-token families), most recently used first',
  status: 200,
  response: z.array(Session),
  errors: [401],
});
export const revokeSessionRoute = defineRoute({
  method: 'delete',
  path: '/v1/account/sessions/{id}',
  tag: 'account',
  auth: 'bearer',
  summary:
    "End one session: its refresh and access tokens stop working and its app WebSockets close (404: not one of the caller's)",
  params: z.object({ id: z.string().max(64) }),
  status: 200,
  response: MessageBody,
  errors: [401, 404],
});
export const revokeOtherSessionsRoute = defineRoute({
  method: 'delete',
  path: '/v1/account/sessions',
  tag: 'account',
  auth: 'bearer',
  summary: "End every session but the caller's own (all of them when called with a personal access token)",
  status: 200,
  response: MessageBody,
  errors: [401],
});
export const accountNotificationsRoute = defineRoute({
  method: 'put',
  path: '/v1/account/notifications',
  tag: 'account',
  auth: 'bearer',
  summary: 'Which optional mails the account gets (new_sign_in: a sign-in from a new device; default off)',
  body: AccountNotifications,
  status: 200,
  response: AccountNotifications,
  errors: [400, 401, 413],
});
