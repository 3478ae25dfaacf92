import { routes } from '@smarthome/protocol';
import type { CloudRouter } from '../context.ts';
import type { CloudDatabase } from '../db/database.ts';
import type { MailQueue } from '../mail/queue.ts';
import { userOf } from '../http/route-inputs.ts';
import { OrgService } from './service.ts';
import { InvitationService } from './invitations.ts';
import { ShareService } from './shares.ts';
import { shareTargetChecks } from './share-targets.ts';
import { pickLocale } from '../mail/templates.ts';

/** Organizations, branding, members, invitations and shares (/v1/organizations/…, /v1/invitations/…). */
export interface OrgRoutesDeps {
  database: CloudDatabase;
  mail: MailQueue;
  /** where invitation links point */
  publicUrl: () => string;
}

export function mountOrgRoutes(router: CloudRouter, s: OrgRoutesDeps): void {
  const orgs = new OrgService({ database: s.database });
  const invitations = new InvitationService({ database: s.database, mail: s.mail, publicUrl: s.publicUrl });
  const shares = new ShareService({ database: s.database, targets: shareTargetChecks(() => s.database.db) });

  router.add(routes.createOrganizationRoute, async ({ auth, body }) => orgs.create(userOf(auth), body));
  router.add(routes.listOrganizationsRoute, async ({ auth }) => orgs.listForUser(userOf(auth)));
  router.add(routes.getOrganizationRoute, async ({ auth, params }) => orgs.get(userOf(auth), params.id));
  router.add(routes.patchOrganizationRoute, async ({ auth, params, body }) =>
    orgs.patch(userOf(auth), params.id, body),
  );
  router.add(routes.patchBrandingRoute, async ({ auth, params, body }) => {
    await orgs.patchBranding(userOf(auth), params.id, body);
    return { ok: true as const };
  });

  router.add(routes.listMembersRoute, async ({ auth, params }) => orgs.listMembers(userOf(auth), params.id));
  router.add(routes.patchMemberRoute, async ({ auth, params, body }) =>
    orgs.setRole(userOf(auth), params.id, params.user_id, body.role),
  );
  router.add(routes.deleteMemberRoute, async ({ auth, params }) => {
    const caller = userOf(auth);
    await orgs.removeMember(caller, params.id, params.user_id);
    return { message: params.user_id === caller ? 'left the organization' : 'member removed' };
  });

  router.add(routes.createInvitationRoute, async ({ auth, params, body, c }) =>
    invitations.create(userOf(auth), params.id, body, pickLocale(c.req.header('accept-language'))),
  );
  router.add(routes.listInvitationsRoute, async ({ auth, params }) => invitations.list(userOf(auth), params.id));
  router.add(routes.revokeInvitationRoute, async ({ auth, params }) => {
    await invitations.revoke(userOf(auth), params.id, params.invitation_id);
    return { message: 'invitation revoked' };
  });
  router.add(routes.invitationPageRoute, async ({ params }) => invitations.page(params.token));
  router.add(routes.acceptInvitationRoute, async ({ auth, params }) => invitations.accept(userOf(auth), params.token));
  router.add(routes.declineInvitationRoute, async ({ auth, params }) => {
    await invitations.decline(userOf(auth), params.token);
    return { message: 'invitation declined' };
  });

  router.add(routes.createShareRoute, async ({ auth, params, body }) => shares.create(userOf(auth), params.id, body));
  router.add(routes.listSharesRoute, async ({ auth, params }) => shares.list(userOf(auth), params.id));
  router.add(routes.patchShareRoute, async ({ auth, params, body }) =>
    shares.update(userOf(auth), params.id, Number(params.share_id), body),
  );
  router.add(routes.deleteShareRoute, async ({ auth, params }) => {
    await shares.remove(userOf(auth), params.id, Number(params.share_id));
    return { message: 'share deleted' };
  });
}
