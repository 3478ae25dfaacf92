import { useEffect, useState } from 'preact/hooks';
import type { z } from 'zod';
import { MessageBody } from '@smarthome/protocol/common';
import { AcceptedInvitation, InvitationPage as InvitationPageSchema } from '@smarthome/protocol/orgs';
import { api, describe } from '../api/http.ts';
import { navigate, onLink } from '../app/router.ts';
import { BrandedButton, BrandedInvitation, brandedLook } from './BrandedInvitation.tsx';
import { Alert } from '../app/Alert.tsx';

/**
 * The public invitation page, in the organization's branding: readable signed out; accepting
 * or declining needs the invited account (sign-in or register come back here). The mail's link is
 * /invitations/<id>?token=<token>; /invitations/<token> (older links) works too.
 */
export function InvitationPage({ token, signedIn }: { token: string; signedIn: boolean }) {
  const [page, setPage] = useState<z.infer<typeof InvitationPageSchema> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [joined, setJoined] = useState<z.infer<typeof AcceptedInvitation> | null>(null);
  const [declined, setDeclined] = useState(false);
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
  const decline = async () => {
    setError(null);
    try {
      await api('POST', `/v1/invitations/${encodeURIComponent(token)}/decline`, { schema: MessageBody });
      setDeclined(true);
    } catch (err) {
      setError(describe(err));
    }
  };
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  const favicon = (dark && page?.branding.darkFavicon) || page?.branding.favicon;
  useEffect(() => {
    // the organization's favicon while its page is open; the portal's own again after
    const link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
    if (!link || !favicon) return;
    const own = link.href;
    link.removeAttribute('type');
    link.href = favicon;
    return () => {
      link.href = own;
    };
  }, [favicon]);
  const next = `?next=${encodeURIComponent(location.pathname + location.search)}`;
  return (
    <BrandedInvitation page={page} dark={dark}>
      <Alert message={error} />
      {joined ? (
        <p role="status">
          You joined {joined.organization.name} as {joined.role}.{' '}
          <a href="/" onClick={onLink}>
            Open your dashboard
          </a>
        </p>
      ) : declined ? (
        <p role="status">
          You declined the invitation to {page?.organization.name}.{' '}
          <a href="/" onClick={onLink}>
            Open your dashboard
          </a>
        </p>
      ) : (
        page &&
        (signedIn ? (
          <p class="actions">
            <BrandedButton look={brandedLook(page, dark)} onClick={() => void accept()} />
            <button type="button" class="secondary" onClick={() => void decline()}>
              Decline
            </button>
            <button type="button" class="secondary" onClick={() => navigate('/')}>
              Not now
            </button>
          </p>
        ) : (
          <p>
            <a href={`/signin${next}`} onClick={onLink}>
              Sign in to accept or decline
            </a>{' '}
            or{' '}
            <a href={`/register${next}`} onClick={onLink}>
              create an account
            </a>{' '}
            with {page.email}.
          </p>
        ))
      )}
    </BrandedInvitation>
  );
}
