import { z } from 'zod';
import { Email, NonEmpty, Timestamp, Uuid } from './common.ts';

export const User = z.object({ id: z.string(), email: z.string(), name: z.string().nullable() }).meta({ id: 'User' });

const NewPassword = z.string().min(8, 'password must be at least 8 characters').max(1024);

export const RegisterBody = z
  .object({
    email: Email,
    password: NewPassword,
    name: z.string().trim().max(200).optional(),
  })
  .meta({ id: 'RegisterRequest' });

export const ChangePasswordBody = z
  .object({
    password: NewPassword.meta({ description: 'the new password' }),
  })
  .meta({ id: 'ChangePasswordRequest' });

export const PasswordGrant = z.object({
  grant_type: z.literal('password'),
  email: Email,
  password: z.string().min(1).max(1024),
  mfa_code: z.string().max(64).optional(),
});
export const RefreshGrant = z.object({
  grant_type: z.literal('refresh_token'),
  refresh_token: z.string().min(1).max(512),
});
export const TokenBody = z.discriminatedUnion('grant_type', [PasswordGrant, RefreshGrant]).meta({ id: 'TokenRequest' });

export const TokenResponse = z
  .object({
    user: User,
    access_token: z.string(),
    refresh_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
  })
  .meta({ id: 'TokenResponse' });

export const CreatePatBody = z.object({ name: NonEmpty(100) }).meta({ id: 'CreatePersonalAccessToken' });
export const PersonalAccessToken = z
  .object({
    id: z.string(),
    name: z.string(),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
  })
  .meta({ id: 'PersonalAccessToken' });
export const CreatedPersonalAccessToken = z
  .object({
    id: z.string(),
    name: z.string(),
    token: z.string().meta({ description: 'shown once; stored hashed' }),
    created_at: Timestamp,
  })
  .meta({ id: 'CreatedPersonalAccessToken' });

export const OrgRole = z.enum(['admin', 'member']);
export const Account = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    app_account_token: Uuid,
    email_verified: z.boolean().meta({
      description:
        'the owner followed a verification (or password reset) link sent to this address; only then can they claim invitations and transfers sent to it',
    }),
    mfa_enabled: z.boolean().meta({ description: 'TOTP is enrolled: the password grant needs mfa_code' }),
    notify_new_sign_in: z
      .boolean()
      .meta({ description: 'a sign-in from a User-Agent no session of the account had is mailed to its address' }),
    organizations: z.array(z.object({ id: z.string(), name: z.string(), role: OrgRole })),
  })
  .meta({ id: 'Account' });

const LinkToken = z.string().min(1).max(512).meta({ description: 'the token from the link in the mail' });
export const VerifyEmailBody = z.object({ token: LinkToken }).meta({ id: 'VerifyEmailRequest' });
export const ChangeEmailBody = z.object({ email: Email }).meta({ id: 'ChangeEmailRequest' });
export const PasswordResetBody = z.object({ email: Email }).meta({ id: 'PasswordResetRequest' });
export const PasswordResetConfirmBody = z
  .object({ token: LinkToken, password: NewPassword.meta({ description: 'the new password' }) })
  .meta({ id: 'PasswordResetConfirmRequest' });

export const TotpEnrolment = z
  .object({
    secret: z.string().meta({ description: 'base32, for typing into an authenticator app' }),
    otpauth_uri: z.string().meta({ description: 'otpauth://totp/… (SHA1, 6 digits, 30 s)' }),
    qr_svg: z.string().meta({ description: 'the URI as a QR code, an SVG document' }),
  })
  .meta({ id: 'TotpEnrolment' });
const Code = z.string().trim().min(1).max(64);
export const TotpConfirmBody = z
  .object({ code: Code.meta({ description: 'a current code from the app' }) })
  .meta({ id: 'TotpConfirmRequest' });
export const TotpDisableBody = z
  .object({ code: Code.meta({ description: 'a current TOTP code or an unused backup code' }) })
  .meta({ id: 'TotpDisableRequest' });

export const Session = z
  .object({
    id: z.string(),
    user_agent: z.string().nullable().meta({ description: 'the User-Agent of the newest sign-in or refresh' }),
    client_address: z.string().nullable(),
    created_at: Timestamp,
    last_used_at: Timestamp.meta({ description: 'the newest sign-in or refresh of the session' }),
    current: z.boolean().meta({ description: "the caller's own session" }),
  })
  .meta({ id: 'Session' });

export const AccountNotifications = z.object({ notify_new_sign_in: z.boolean() }).meta({ id: 'AccountNotifications' });

export const BackupCodes = z.object({ codes: z.array(z.string()).length(10) }).meta({ id: 'BackupCodes' });

export type User = z.infer<typeof User>;
export type RegisterBody = z.infer<typeof RegisterBody>;
export type TokenBody = z.infer<typeof TokenBody>;
export type TokenResponse = z.infer<typeof TokenResponse>;
export type Account = z.infer<typeof Account>;
export type OrgRole = z.infer<typeof OrgRole>;
