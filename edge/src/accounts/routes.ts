import {
  localOnboardRoute,
  localOnboardingStatusRoute,
  localSignInRoute,
  localSignOutRoute,
} from '@smarthome/protocol/routes/local-accounts';
import { rateLimited, unauthorized, type SpecRouter } from '@smarthome/protocol/server';
import type { Caller } from '../api/app.ts';
import { mountLocalAccountManagement } from './manage.ts';
import type { LocalAccountStore } from './store.ts';
import { SignInThrottle } from './throttle.ts';

/** Onboarding (the first account, only while there is none), local sign-in and sign-out, and the owner's management. */
export function mountLocalAccountRoutes(
  router: SpecRouter<Caller>,
  accounts: LocalAccountStore,
  throttle = new SignInThrottle(),
): void {
  router.add(localOnboardingStatusRoute, () => ({ onboarded: accounts.count() > 0 }));

  router.add(localOnboardRoute, async ({ body }) => {
    // a second owner is a ConflictError (409), answered by onError
    const account = await accounts.create(body.username, body.password, 'owner', { onlyIfFirst: true });
    return { access_token: accounts.openSession(account), token_type: 'Bearer' as const, account };
  });

  router.add(localSignInRoute, async ({ body }) => {
    const key = `user:${body.username.toLowerCase()}`;
    const wait = throttle.waitFor(key);
    if (wait > 0) throw rateLimited(wait);
    const account = await accounts.verify(body.username, body.password);
    if (!account) {
      throttle.fail(key);
      throw unauthorized('invalid_credentials');
    }
    throttle.succeed(key);
    return { access_token: accounts.openSession(account), token_type: 'Bearer' as const, account };
  });

  router.add(localSignOutRoute, ({ auth }) => {
    if (auth.kind === 'token') accounts.closeSession(auth.tokenId);
    return { message: 'signed out' };
  });

  mountLocalAccountManagement(router, accounts, throttle);
}
