import type { LocalAccount } from '@smarthome/protocol/local-accounts';
import {
  localAccountCreateRoute,
  localAccountDeleteRoute,
  localAccountsListRoute,
  localMeRoute,
  localPasswordRoute,
} from '@smarthome/protocol/routes/local-accounts';
import { badRequest, forbidden, rateLimited, unauthorized, type SpecRouter } from '@smarthome/protocol/server';
import type { Caller } from '../api/app.ts';
import type { LocalAccountStore } from './store.ts';
import type { SignInThrottle } from './throttle.ts';

/** Who a caller is for account management: a local account, or a plain local token acting as an owner. */
type Manager = { account: LocalAccount | null; tokenId: number };

function whoIs(accounts: LocalAccountStore, auth: Caller): Manager {
  // the cloud relays calls of cloud users (shared members too): local accounts stay the home's own business
  if (auth.kind !== 'token') throw forbidden('edge_local_only');
  const of = accounts.ofToken(auth.tokenId);
  if (!of) throw unauthorized();
  return { account: of.kind === 'account' ? of.account : null, tokenId: auth.tokenId };
}

/** Owners, and local tokens that are not sessions (their holder has the data directory and the CLI anyway). */
function owner(accounts: LocalAccountStore, auth: Caller): Manager {
  const who = whoIs(accounts, auth);
  if (who.account && who.account.role !== 'owner') throw forbidden('owner_only');
  return who;
}

function signedIn(accounts: LocalAccountStore, auth: Caller): { account: LocalAccount; tokenId: number } {
  const who = whoIs(accounts, auth);
  if (!who.account) throw forbidden('not_a_local_account');
  return { account: who.account, tokenId: who.tokenId };
}

/** The owner's management of the home's local accounts, and every account's own password. */
export function mountLocalAccountManagement(
  router: SpecRouter<Caller>,
  accounts: LocalAccountStore,
  throttle: SignInThrottle,
): void {
  router.add(localMeRoute, ({ auth }) => signedIn(accounts, auth).account);

  router.add(localAccountsListRoute, ({ auth }) => {
    owner(accounts, auth);
    return accounts.list();
  });

  router.add(localAccountCreateRoute, async ({ auth, body }) => {
    owner(accounts, auth);
    // a taken username is a ConflictError (409), answered by onError
    return accounts.create(body.username, body.password, body.role);
  });

  router.add(localAccountDeleteRoute, ({ auth, params }) => {
    const who = owner(accounts, auth);
    const gone = accounts.remove(Number(params.id), who.account?.id ?? null);
    return { message: `deleted local account ${gone.username}` };
  });

  router.add(localPasswordRoute, async ({ auth, body }) => {
    const me = signedIn(accounts, auth);
    // a stolen session must not guess the password: the same throttle as sign-in
    const key = `user:${me.account.username.toLowerCase()}`;
    const wait = throttle.waitFor(key);
    if (wait > 0) throw rateLimited(wait);
    if (!(await accounts.changePassword(me.account, body.current_password, body.new_password, me.tokenId))) {
      throttle.fail(key);
      // 400, not 401: the session itself is fine, and a 401 would sign the portal out
      throw badRequest('the current password is wrong');
    }
    throttle.succeed(key);
    return { message: 'password changed; your other sessions were signed out' };
  });
}
