import { useEffect, useState } from 'preact/hooks';
import type { z } from 'zod';
import { AcceptedInvitation, InvitationPage as InvitationPageSchema } from '@smarthome/protocol/orgs';
import { api, describe } from '../api/http.ts';
import { navigate, onLink } from '../app/router.ts';

/**
 * The public invitation page, in the organization's branding: readable signed out; accepting
 * needs the invited account (sign-in or register come back here). The mail's link is
 * /invitations/<id>?token=<token>; /invitations/<token> (older links) works too.
 */
export function InvitationPage({ token, signedIn }: { token: string; signedIn: boolean }) {
  const [page, setPage] = useState<z.infer<typeof InvitationPageSchema> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [joined, setJoined] = useState<z.infer<typeof AcceptedInvitation> | null>(null);
  useEffect(() => {
    api('GET', `/v1/invitations/${encodeURIComponent(token)}`, { anonymous: true, schema: InvitationPageSchema }).then(
      setPage,
      (e: unknown) => setError(describe(e)),
    );
  }, [token]);
  const accept = async () => {
    setError(null);
    try {
      setJoined(
        await api('POST', `/v1/invitations/${encodeURIComponent(token)}/accept`, { schema: AcceptedInvitation }),
      );
    } catch (err) {
      setError(describe(err));
    }
  };
  const next = `?next=${encodeURIComponent(location.pathname + location.search)}`;
  const b = page?.branding ?? {};
  const ib = page?.inviteBranding ?? {};
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  const logo = (dark && b.darkLogoUrl) || b.logoUrl;
  const color = (dark && b.darkColor) || b.color || undefined;
  return (
    <main
      class="narrow invitation"
      style={{
        background: ib.pageBackgroundColor ?? undefined,
        backgroundImage: ib.backgroundImageUrl ? `url("${encodeURI(ib.backgroundImageUrl)}")` : undefined,
      }}
    >
      <div class="card">
        {logo && <img class="logo" src={logo} alt={`${page?.organization.name ?? ''} logo`} />}
        <h1>{ib.headline || (page ? `Join ${page.organization.name}` : 'Invitation')}</h1>
        {page && <p>{ib.subheadline || `${page.email} is invited to ${page.organization.name} as ${page.role}.`}</p>}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {joined ? (
          <p role="status">
            You joined {joined.organization.name} as {joined.role}.{' '}
            <a href="/" onClick={onLink}>
              Open your dashboard
            </a>
          </p>
        ) : (
          page &&
          (signedIn ? (
            <p class="actions">
              <button type="button" style={{ background: color, borderColor: color }} onClick={() => void accept()}>
                {ib.primaryButtonLabel || 'Accept invitation'}
              </button>
              <button type="button" class="secondary" onClick={() => navigate('/')}>
                Not now
              </button>
            </p>
          ) : (
            <p>
              <a href={`/signin${next}`} onClick={onLink}>
                Sign in to accept
              </a>{' '}
              or{' '}
              <a href={`/register${next}`} onClick={onLink}>
                create an account
              </a>{' '}
              with {page.email}.
            </p>
          ))
        )}
      </div>
    </main>
  );
}
