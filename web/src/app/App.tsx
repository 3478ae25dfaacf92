import { useEffect, useMemo, useState } from 'preact/hooks';
import { z } from 'zod';
import { Session as SessionSchema } from '@smarthome/protocol/auth';
import { OnboardingStatus } from '@smarthome/protocol/local-accounts';
import { AccountPage } from '../account/Account.tsx';
import { AutomationsRoute, isAutomationsPath } from '../automations/lazy.tsx';
import { api, describe, refresh } from '../api/http.ts';
import { portalKind, session, type Session } from '../api/session.ts';
import { ResetPasswordPage, VerifyEmailPage, linkToken } from '../auth/EmailLinks.tsx';
import { Register, SignIn } from '../auth/SignIn.tsx';
import { DashboardPage } from '../dashboards/Dashboard.tsx';
import { DevicePage, DevicesPage, EntitiesPage } from '../devices/Devices.tsx';
import { HomesPage } from '../homes/Homes.tsx';
import { IntegrationsPage } from '../integrations/Integrations.tsx';
import { OAuthReturnPage } from '../integrations/OAuthReturn.tsx';
import { Controls } from '../live/controls.ts';
import { LocalAccountPage } from '../local-accounts/LocalAccounts.tsx';
import { LiveStates, useLiveShape } from '../live/states.ts';
import { Onboarding } from '../onboarding/Onboarding.tsx';
import { InvitationPage } from '../orgs/Invitation.tsx';
import { OrganizationPage, OrganizationsPage } from '../orgs/Organizations.tsx';
import { TransferPage } from '../transfers/Transfer.tsx';
import { App as AppCtx } from './context.ts';
import { ScopeSwitcher } from './Scope.tsx';
import { usePageHeading } from './heading.ts';
import { navigate, nextPath, onLink, usePath } from './router.ts';

const kind = portalKind();

function useSession(): Session | null {
  const [s, setS] = useState(session.get());
  useEffect(() => session.subscribe(() => setS(session.get())), []);
  return s;
}

/** Ends the session on the server too (forgetting the tokens locally would leave the refresh token usable). */
async function signOut(live: LiveStates): Promise<void> {
  // before the server ends the session: its end would make the library reconnect with a revoked token
  live.stop();
  if (kind === 'edge') await api('POST', '/v1/local/auth/logout').catch(() => undefined);
  else
    await api('GET', '/v1/account/sessions', { schema: z.array(SessionSchema), org: null })
      .then((list) => {
        const mine = list.find((x) => x.current);
        // revoking the session ends its refresh token, its access tokens and its WebSockets at once
        return mine && api('DELETE', `/v1/account/sessions/${encodeURIComponent(mine.id)}`, { org: null });
      })
      .catch(() => undefined);
  session.set(null);
  navigate('/signin', true);
}

function Page({ path }: { path: string }) {
  const org = /^\/organizations\/([^/]+)$/.exec(path);
  if (org && kind === 'cloud') return <OrganizationPage id={decodeURIComponent(org[1])} />;
  const m = /^\/(dashboards|devices|transfers)\/(\d+)$/.exec(path);
  if (m?.[1] === 'dashboards') return <DashboardPage id={Number(m[2])} />;
  if (m?.[1] === 'devices') return <DevicePage id={Number(m[2])} />;
  if (m?.[1] === 'transfers' && kind === 'cloud') return <TransferPage id={Number(m[2])} />;
  if (isAutomationsPath(path)) return <AutomationsRoute path={path} />;
  switch (path) {
    case '/':
    case '/dashboards':
      return <DashboardPage id={null} />;
    case '/homes':
      return kind === 'cloud' ? <HomesPage /> : <p>Homes are managed on the cloud portal.</p>;
    case '/devices':
      return <DevicesPage />;
    case '/organizations':
      return kind === 'cloud' ? <OrganizationsPage /> : <p>Organizations live on the cloud portal.</p>;
    case '/entities':
      return <EntitiesPage />;
    case '/integrations':
      return <IntegrationsPage />;
    case '/integrations/oauth':
      return <OAuthReturnPage />;
    case '/account':
      return kind === 'cloud' ? <AccountPage /> : <LocalAccountPage />;
    default:
      return (
        <div>
          <h1>Not found</h1>
          <p>
            No page at {path}.{' '}
            <a href="/" onClick={onLink}>
              Go to the dashboard
            </a>
          </p>
        </div>
      );
  }
}

function Shell({ s, path }: { s: Session; path: string }) {
  const live = useMemo(
    () =>
      new LiveStates({
        // Home Assistant's WebSocket API on both servers, spoken by home-assistant-js-websocket
        wsUrl: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/websocket`,
        accessToken: () => session.get()?.access_token ?? null,
        organizationId: () => (kind === 'cloud' ? (session.get()?.org ?? null) : null),
        refresh,
      }),
    [],
  );
  const controls = useMemo(() => new Controls(live), [live]);
  useEffect(() => {
    live.start();
    let org = session.get()?.org ?? null;
    const unsubscribe = session.subscribe(() => {
      const now = session.get();
      // signed out: close now, no reconnect with a token that is gone
      if (!now) return live.stop();
      // another scope: a new connection (a refreshed token needs none: the next auth takes it)
      if ((now.org ?? null) !== org) {
        org = now.org ?? null;
        live.stop();
        live.start();
      }
    });
    return () => {
      unsubscribe();
      live.stop();
    };
  }, [live]);
  // the status badge: not every state change (the pages follow the entities they show)
  useLiveShape(live);
  const links: Array<[string, string]> = [
    ['/', 'Dashboard'],
    ...(kind === 'cloud' ? [['/homes', 'Homes'] as [string, string]] : []),
    ['/devices', 'Devices'],
    ['/entities', 'Entities'],
    ['/automations', 'Automations'],
    ['/integrations', 'Integrations'],
    ...(kind === 'cloud' ? [['/organizations', 'Organizations'] as [string, string]] : []),
    ['/account', 'Account'],
  ];
  return (
    <AppCtx.Provider value={{ kind, live, controls }}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="bar">
        <strong class="brand">{kind === 'cloud' ? 'Smart home' : 'Smart home · this home'}</strong>
        <nav aria-label="Main">
          {links.map(([href, label]) => (
            <a key={href} href={href} onClick={onLink} aria-current={path === href ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        {kind === 'cloud' && <ScopeSwitcher org={s.org ?? null} path={path} />}
        <span class={`badge ${live.status === 'live' ? 'online' : 'offline'}`} role="status" title="live updates">
          {live.status === 'live' ? 'live' : live.status}
        </span>
        <span class="who">{s.who}</span>
        <button type="button" onClick={() => void signOut(live)}>
          Sign out
        </button>
      </header>
      <main id="main">
        {/* keyed on the scope: another workspace mounts the page afresh, which fetches that scope's data */}
        <Page key={kind === 'cloud' ? (s.org ?? '') : ''} path={path} />
      </main>
    </AppCtx.Provider>
  );
}

export function App() {
  const s = useSession();
  const path = usePath();
  usePageHeading(path);
  const [onboarded, setOnboarded] = useState<boolean | null>(kind === 'cloud' ? true : null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (kind === 'edge')
      api('GET', '/v1/local/onboarding', { anonymous: true, schema: OnboardingStatus }).then(
        (o) => setOnboarded(o.onboarded),
        (e: unknown) => setError(describe(e)),
      );
  }, []);
  if (error)
    return (
      <main class="narrow">
        <p class="error" role="alert">
          {error}
        </p>
      </main>
    );
  if (onboarded === null)
    return (
      <main class="narrow">
        <p role="status">Loading…</p>
      </main>
    );
  const invitation = kind === 'cloud' ? /^\/invitations\/([^/]+)$/.exec(path) : null;
  if (invitation) return <InvitationPage token={linkToken() ?? decodeURIComponent(invitation[1])} signedIn={!!s} />;
  // the pages the cloud's mails link to work signed in or out
  if (kind === 'cloud' && path === '/verify-email') return <VerifyEmailPage signedIn={!!s} />;
  if (kind === 'cloud' && path === '/reset-password') return <ResetPasswordPage />;
  if (!onboarded && !s) return <Onboarding onDone={() => setOnboarded(true)} />;
  if (!s) {
    if (path === '/register' && kind === 'cloud') return <Register />;
    return <SignIn kind={kind} />;
  }
  if (path === '/signin' || path === '/register' || path === '/onboarding') {
    navigate(nextPath(), true);
    return null;
  }
  return <Shell s={s} path={path} />;
}
