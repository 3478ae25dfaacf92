import { routes } from '@smarthome/protocol';
import { unauthorized } from '@smarthome/protocol/server';
import { eq } from 'drizzle-orm';
import type { CloudRouter } from '../context.ts';
import type { CloudDatabase } from '../db/database.ts';
import type { MailQueue } from '../mail/queue.ts';
import { clientAddress } from '../http/client-address.ts';
import { orgMembers, organizations } from '../orgs/tables.ts';
import { pickLocale } from '../mail/templates.ts';
import { AccountEmailService, RESET_REQUESTED } from './account-email.ts';
import { MfaService } from './mfa.ts';
import { SessionList, currentSession } from './sessions.ts';
import { userOf } from '../http/route-inputs.ts';
import type { EmailLinks } from './email-links.ts';
import type { AuthService } from './service.ts';
import type { LoginThrottle } from './throttle.ts';
import type { Context } from 'hono';

export interface AuthRoutesDeps {
  database: CloudDatabase;
  auth: AuthService;
  links: EmailLinks;
  throttle: LoginThrottle;
  mail: MailQueue;
}

export function mountAuthRoutes(router: CloudRouter, s: AuthRoutesDeps): void {
  const accountEmail = new AccountEmailService({
    database: s.database,
    auth: s.auth,
    links: s.links,
    throttle: s.throttle,
  });
  const client = (c: Context) => ({ userAgent: c.req.header('user-agent') ?? null, address: clientAddress(c) });
  const sessions = new SessionList({ database: s.database, auth: s.auth });
  router.add(routes.listSessionsRoute, async ({ auth }) => sessions.list(userOf(auth), currentSession(auth)));
  router.add(routes.revokeSessionRoute, async ({ auth, params }) => {
    await sessions.revoke(userOf(auth), params.id);
    return { message: 'session revoked' };
  });
  router.add(routes.revokeOtherSessionsRoute, async ({ auth }) => {
    const ended = await sessions.revokeAllBut(userOf(auth), currentSession(auth));
    return { message: `${ended} session(s) revoked` };
  });
  router.add(routes.accountNotificationsRoute, async ({ auth, body }) => {
    await s.auth.setSignInNotice(userOf(auth), body.notify_new_sign_in);
    return { notify_new_sign_in: body.notify_new_sign_in };
  });
  const locale = (c: { req: { header(name: string): string | undefined } }) =>
    pickLocale(c.req.header('accept-language'));

  const mfa = new MfaService({ database: s.database, auth: s.auth, throttle: s.throttle, mail: s.mail });
  router.add(routes.totpEnrolRoute, async ({ auth, c }) =>
    mfa.enrol(userOf(auth), c.req.header('x-account-verification'), clientAddress(c)),
  );
  router.add(routes.totpConfirmRoute, async ({ auth, body, c }) => {
    await mfa.confirm(userOf(auth), body.code, clientAddress(c));
    return { message: 'TOTP enabled' };
  });
  router.add(routes.totpDisableRoute, async ({ auth, body, c }) => {
    await mfa.disable(userOf(auth), c.req.header('x-account-verification'), body.code, clientAddress(c));
    return { message: 'TOTP disabled' };
  });

  router.add(routes.registerRoute, async ({ body, c }) => s.auth.register(body, locale(c), client(c)));
  router.add(routes.verifyEmailRoute, async ({ body }) => {
    await accountEmail.verify(body.token);
    return { message: 'email verified' };
  });
  router.add(routes.resendVerificationRoute, async ({ auth, c }) => {
    await accountEmail.resend(userOf(auth), locale(c));
    return { message: 'verification mail queued' };
  });
  router.add(routes.changeEmailRoute, async ({ auth, body, c }) => {
    await accountEmail.changeEmail(
      userOf(auth),
      c.req.header('x-account-verification'),
      body.email,
      clientAddress(c),
      locale(c),
    );
    return { message: 'email changed; follow the link sent to the new address to verify it' };
  });
  router.add(routes.passwordResetRoute, async ({ body, c }) => {
    await accountEmail.requestReset(body.email, clientAddress(c), locale(c));
    return { message: RESET_REQUESTED };
  });
  router.add(routes.passwordResetConfirmRoute, async ({ body }) => {
    await accountEmail.confirmReset(body.token, body.password);
    return { message: 'password changed; every session was signed out' };
  });

  router.add(routes.tokenRoute, async ({ body, c }) => {
    if (body.grant_type === 'password')
      return s.auth.passwordGrant(body, clientAddress(c), c.req.header('user-agent') ?? null);
    return s.auth.refreshGrant(body.refresh_token, client(c));
  });

  router.add(routes.accountRoute, async ({ auth }) => {
    const user = await s.auth.getUser(userOf(auth));
    const orgs = await s.database.db
      .select({ id: organizations.id, name: organizations.name, role: orgMembers.role })
      .from(orgMembers)
      .innerJoin(organizations, eq(organizations.id, orgMembers.orgId))
      .where(eq(orgMembers.userId, user.id))
      .all();
    return {
      id: user.id,
      email: user.email,
      name: user.name ?? null,
      app_account_token: user.appAccountToken,
      email_verified: user.emailVerified,
      mfa_enabled: user.totpSecret !== null,
      notify_new_sign_in: user.notifyNewSignIn,
      organizations: orgs,
    };
  });

  router.add(routes.createPatRoute, async ({ auth, body }) => s.auth.createPat(userOf(auth), body.name));
  router.add(routes.listPatsRoute, async ({ auth }) => s.auth.listPats(userOf(auth)));
  router.add(routes.deletePatRoute, async ({ auth, params }) => {
    await s.auth.revokePat(userOf(auth), params.id);
    return { message: 'token revoked' };
  });

  router.add(routes.changePasswordRoute, async ({ auth, body, c }) => {
    if (auth.via !== 'jwt' && auth.via !== 'pat') throw unauthorized();
    await s.auth.changePassword(auth, c.req.header('x-account-verification'), body.password, clientAddress(c));
    return { message: 'password changed' };
  });

  router.add(routes.backupCodesRoute, async ({ auth, c }) => ({
    codes: await s.auth.generateBackupCodes(userOf(auth), c.req.header('x-account-verification'), clientAddress(c)),
  }));
}
