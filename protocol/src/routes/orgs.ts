import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { MessageBody, OkBody } from '../common.ts';
import {
  AcceptedInvitation,
  BrandingBody,
  CreateInvitationBody,
  CreateOrganizationBody,
  CreateShareBody,
  Invitation,
  InvitationPage,
  InvitationSummary,
  InvitationTokenParams,
  Member,
  OrgIdParams,
  OrgInvitationParams,
  OrgMemberParams,
  OrgShareParams,
  Organization,
  OrganizationWithRole,
  PatchShareBody,
  PatchMemberBody,
  PatchOrganizationBody,
  Share,
} from '../orgs.ts';

const tag = 'organizations';

export const createOrganizationRoute = defineRoute({
  method: 'post',
  path: '/v1/organizations',
  summary: 'Create an organization (the caller becomes its admin)',
  tag,
  auth: 'bearer',
  body: CreateOrganizationBody,
  status: 201,
  response: Organization,
  errors: [400, 401, 413],
});
export const listOrganizationsRoute = defineRoute({
  method: 'get',
  path: '/v1/organizations',
  summary: "The caller's organizations with the caller's role",
  tag,
  auth: 'bearer',
  status: 200,
  response: z.array(OrganizationWithRole),
  errors: [401],
});
export const getOrganizationRoute = defineRoute({
  method: 'get',
  path: '/v1/organizations/{id}',
  summary: 'One organization (members only)',
  tag,
  auth: 'bearer',
  params: OrgIdParams,
  status: 200,
  response: Organization,
  errors: [401, 403, 404],
});
export const patchOrganizationRoute = defineRoute({
  method: 'patch',
  path: '/v1/organizations/{id}',
  summary: 'Update name, description or require_mfa (admin only; 409 turning require_mfa on without MFA yourself)',
  tag,
  auth: 'bearer',
  params: OrgIdParams,
  body: PatchOrganizationBody,
  status: 200,
  response: Organization,
  errors: [400, 401, 403, 404, 409, 413, 500],
});
export const patchBrandingRoute = defineRoute({
  method: 'patch',
  path: '/v1/organizations/{id}/branding',
  summary:
    'Update description, branding and invitation-page branding (admin only; present fields replace, null clears)',
  tag,
  auth: 'bearer',
  params: OrgIdParams,
  body: BrandingBody,
  status: 200,
  response: OkBody,
  errors: [400, 401, 403, 404, 413, 500],
});

export const listMembersRoute = defineRoute({
  method: 'get',
  path: '/v1/organizations/{id}/members',
  summary: 'Members of the organization (members only)',
  tag,
  auth: 'bearer',
  params: OrgIdParams,
  status: 200,
  response: z.array(Member),
  errors: [401, 403, 404],
});
export const patchMemberRoute = defineRoute({
  method: 'patch',
  path: '/v1/organizations/{id}/members/{user_id}',
  summary: "Change a member's role (admin only; the last admin cannot be demoted)",
  tag,
  auth: 'bearer',
  params: OrgMemberParams,
  body: PatchMemberBody,
  status: 200,
  response: Member,
  errors: [400, 401, 403, 404, 409, 413],
});
export const deleteMemberRoute = defineRoute({
  method: 'delete',
  path: '/v1/organizations/{id}/members/{user_id}',
  summary: 'Remove a member (admin only), or leave (a member removing themselves); the last admin cannot be removed',
  tag,
  auth: 'bearer',
  params: OrgMemberParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404, 409],
});

export const createInvitationRoute = defineRoute({
  method: 'post',
  path: '/v1/organizations/{id}/invitations',
  summary: 'Invite an e-mail address (admin only; the token is shown once, valid 7 days)',
  tag,
  auth: 'bearer',
  params: OrgIdParams,
  body: CreateInvitationBody,
  status: 201,
  response: Invitation,
  errors: [400, 401, 403, 404, 409, 413],
});
export const listInvitationsRoute = defineRoute({
  method: 'get',
  path: '/v1/organizations/{id}/invitations',
  summary: 'Invitations of the organization (admin only)',
  tag,
  auth: 'bearer',
  params: OrgIdParams,
  status: 200,
  response: z.array(InvitationSummary),
  errors: [401, 403, 404],
});
export const revokeInvitationRoute = defineRoute({
  method: 'delete',
  path: '/v1/organizations/{id}/invitations/{invitation_id}',
  summary: 'Revoke a pending invitation (admin only)',
  tag,
  auth: 'bearer',
  params: OrgInvitationParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404],
});
export const invitationPageRoute = defineRoute({
  method: 'get',
  path: '/v1/invitations/{token}',
  summary: 'Public invitation page: organization, branding and invitation branding',
  tag,
  auth: 'none',
  params: InvitationTokenParams,
  status: 200,
  response: InvitationPage,
  errors: [404],
});
export const acceptInvitationRoute = defineRoute({
  method: 'post',
  path: '/v1/invitations/{token}/accept',
  summary: "Accept an invitation (the caller's e-mail must match)",
  tag,
  auth: 'bearer',
  params: InvitationTokenParams,
  status: 200,
  response: AcceptedInvitation,
  errors: [401, 403, 404, 409],
});

export const declineInvitationRoute = defineRoute({
  method: 'post',
  path: '/v1/invitations/{token}/decline',
  summary:
    "Decline an invitation (the caller's e-mail must match, as for accept): it is no longer usable and its admins see it as declined",
  tag,
  auth: 'bearer',
  params: InvitationTokenParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404],
});

export const createShareRoute = defineRoute({
  method: 'post',
  path: '/v1/organizations/{id}/shares',
  summary: 'Share a resource with the organization or one member (admin only)',
  tag,
  auth: 'bearer',
  params: OrgIdParams,
  body: CreateShareBody,
  status: 201,
  response: Share,
  errors: [400, 401, 403, 404, 409, 413, 500],
});
export const listSharesRoute = defineRoute({
  method: 'get',
  path: '/v1/organizations/{id}/shares',
  summary: 'Shares of the organization (admins see all; members see the shares that apply to them)',
  tag,
  auth: 'bearer',
  params: OrgIdParams,
  status: 200,
  response: z.array(Share),
  errors: [401, 403, 404],
});
export const patchShareRoute = defineRoute({
  method: 'patch',
  path: '/v1/organizations/{id}/shares/{share_id}',
  summary:
    "Change a share's flags or member in place; the id stays (admin only; widening a share of an entity or device needs the admin who made it)",
  tag,
  auth: 'bearer',
  params: OrgShareParams,
  body: PatchShareBody,
  status: 200,
  response: Share,
  errors: [400, 401, 403, 404, 409, 413],
});
export const deleteShareRoute = defineRoute({
  method: 'delete',
  path: '/v1/organizations/{id}/shares/{share_id}',
  summary: 'Delete a share (admin only)',
  tag,
  auth: 'bearer',
  params: OrgShareParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404],
});
