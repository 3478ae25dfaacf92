import { z } from 'zod';
import { Email, IntIdParam, NonEmpty, Timestamp } from './common.ts';
import { OrgRole } from './auth.ts';

const nullableText = (max = 2048) => z.string().max(max).nullable();
/** Branding is rendered on the public invitation page: only http(s) URLs (no javascript:, data:). */
const nullableUrl = () =>
  z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .max(2048)
    .nullable();
/** A CSS colour value (#hex, rgb()/hsl(), a name): no characters that could break out of a style. */
const nullableColor = () =>
  z
    .string()
    .max(64)
    .regex(/^[#a-zA-Z0-9(),.%\s/-]+$/, 'must be a CSS color')
    .nullable();

export const Branding = z
  .object({
    logoUrl: nullableUrl(),
    darkLogoUrl: nullableUrl(),
    favicon: nullableUrl(),
    darkFavicon: nullableUrl(),
    color: nullableColor(),
    darkColor: nullableColor(),
  })
  .partial()
  .meta({ id: 'Branding' });

export const InviteBranding = z
  .object({
    headline: nullableText(500),
    subheadline: nullableText(1000),
    primaryButtonLabel: nullableText(200),
    backgroundImageUrl: nullableUrl(),
    pageBackgroundColor: nullableColor(),
  })
  .partial()
  .meta({ id: 'InviteBranding' });

export const Organization = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    branding: Branding,
    inviteBranding: InviteBranding,
    require_mfa: z.boolean().meta({
      description:
        'members must have multi-factor sign-in (TOTP) enabled to act in this organization; without it they get 403 {"error":"mfa_enrollment_required"}',
    }),
    created_at: Timestamp,
  })
  .meta({ id: 'Organization' });

export const OrganizationWithRole = Organization.extend({ role: OrgRole }).meta({ id: 'OrganizationWithRole' });

export const CreateOrganizationBody = z
  .object({
    name: NonEmpty(200),
    description: z.string().max(2000).nullable().optional(),
  })
  .meta({ id: 'CreateOrganization' });

export const PatchOrganizationBody = z
  .object({
    name: NonEmpty(200).optional(),
    description: z.string().max(2000).nullable().optional(),
    require_mfa: z.boolean().optional().meta({
      description:
        'require multi-factor sign-in of every member (409 unless the calling admin has it enabled); applies at once to every request and open session',
    }),
  })
  .meta({ id: 'PatchOrganization' });

export const BrandingBody = z
  .object({
    description: z.string().max(2000).nullable().optional(),
    branding: Branding.nullable().optional(),
    inviteBranding: InviteBranding.nullable().optional(),
  })
  .meta({ id: 'OrganizationBrandingWrite' });

export const Member = z
  .object({
    user_id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    role: OrgRole,
    joined_at: Timestamp,
  })
  .meta({ id: 'Member' });

export const PatchMemberBody = z.object({ role: OrgRole }).meta({ id: 'PatchMember' });

export const InvitationStatus = z.enum(['pending', 'accepted', 'declined', 'expired', 'revoked']);
export const CreateInvitationBody = z
  .object({ email: Email, role: OrgRole.default('member') })
  .meta({ id: 'CreateInvitation' });
export const Invitation = z
  .object({
    id: z.string(),
    email: z.string(),
    role: OrgRole,
    status: InvitationStatus,
    token: z.string(),
    expires_at: Timestamp,
  })
  .meta({ id: 'Invitation' });
/** An invitation as listed to admins: the token is shown once, at creation, and stored hashed. */
export const MailStatus = z.enum(['queued', 'sent', 'failed']).meta({
  description:
    'the invitation mail: queued (or being retried), sent (the mail server took it), failed (given up after retries)',
});
export const InvitationSummary = Invitation.omit({ token: true })
  .extend({ created_at: Timestamp, mail_status: MailStatus.nullable() })
  .meta({ id: 'InvitationSummary' });
export const InvitationPage = z
  .object({
    organization: z.object({ id: z.string(), name: z.string(), description: z.string().nullable() }),
    branding: Branding,
    inviteBranding: InviteBranding,
    email: z.string(),
    role: OrgRole,
  })
  .meta({ id: 'InvitationPage' });
export const AcceptedInvitation = z
  .object({
    organization: z.object({ id: z.string(), name: z.string() }),
    role: OrgRole,
  })
  .meta({ id: 'AcceptedInvitation' });

export const ShareResourceType = z.enum([
  'entity',
  'device',
  'dashboard',
  'lock_access_group',
  'lock_schedule',
  'lock_appointment',
  'lock_credential',
  'lock_visitor',
]);
export const CreateShareBody = z
  .object({
    resource_type: ShareResourceType,
    resource_id: NonEmpty(256),
    can_view: z.boolean().default(true),
    can_control: z.boolean().default(false),
    can_edit: z.boolean().default(false),
    user_id: z
      .string()
      .nullable()
      .default(null)
      .meta({ description: 'limits the share to one member; null = every member' }),
  })
  .meta({ id: 'CreateShare' });
export const PatchShareBody = z
  .object({
    can_view: z.boolean(),
    can_control: z.boolean(),
    can_edit: z.boolean(),
    user_id: z.string().nullable().meta({ description: 'limits the share to one member; null = every member' }),
  })
  .partial()
  // resource_type and resource_id name what is shared: another resource is another share
  .strict()
  .meta({ id: 'PatchShare' });
export const Share = z
  .object({
    id: z.number().int(),
    org_id: z.string(),
    resource_type: ShareResourceType,
    resource_id: z.string(),
    can_view: z.boolean(),
    can_control: z.boolean(),
    can_edit: z.boolean(),
    user_id: z.string().nullable(),
    created_at: Timestamp,
  })
  .meta({ id: 'Share' });

export const OrgIdParams = z.object({ id: z.string() });
export const OrgMemberParams = z.object({ id: z.string(), user_id: z.string() });
export const OrgShareParams = z.object({ id: z.string(), share_id: IntIdParam });
export const OrgInvitationParams = z.object({ id: z.string(), invitation_id: z.string() });
export const InvitationTokenParams = z.object({ token: z.string() });

export type Organization = z.infer<typeof Organization>;
export type Share = z.infer<typeof Share>;
export type ShareResourceType = z.infer<typeof ShareResourceType>;
export type Branding = z.infer<typeof Branding>;
export type InviteBranding = z.infer<typeof InviteBranding>;
