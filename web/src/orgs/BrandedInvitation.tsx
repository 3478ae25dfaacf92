import type { ComponentChildren } from 'preact';
import type { z } from 'zod';
import type { InvitationPage } from '@smarthome/protocol/orgs';

export type InvitationView = z.infer<typeof InvitationPage>;

/** What the branding makes of the page: the logo and button colour for the colour scheme, the texts with their defaults. */
export function brandedLook(page: InvitationView | null, dark: boolean) {
  const b = page?.branding ?? {};
  const ib = page?.inviteBranding ?? {};
  return {
    logo: (dark && b.darkLogoUrl) || b.logoUrl || null,
    color: (dark && b.darkColor) || b.color || undefined,
    headline: ib.headline || (page ? `Join ${page.organization.name}` : 'Invitation'),
    text: page ? ib.subheadline || `${page.email} is invited to ${page.organization.name} as ${page.role}.` : null,
    button: ib.primaryButtonLabel || 'Accept invitation',
    background: ib.pageBackgroundColor ?? undefined,
    backgroundImage: ib.backgroundImageUrl ? `url("${encodeURI(ib.backgroundImageUrl)}")` : undefined,
  };
}

/**
 * The invitation in the organization's branding: the public page renders it as its main, the
 * branding editor's live preview as a box (`as="div"`, a lower heading), so the preview is the page.
 */
export function BrandedInvitation(props: {
  page: InvitationView | null;
  dark: boolean;
  as?: 'main' | 'div';
  children?: ComponentChildren;
}) {
  const look = brandedLook(props.page, props.dark);
  const Frame = props.as ?? 'main';
  const Heading = Frame === 'main' ? 'h1' : 'h3';
  return (
    <Frame
      class={Frame === 'main' ? 'narrow invitation' : 'invitation preview'}
      style={{ background: look.background, backgroundImage: look.backgroundImage }}
    >
      <div class="card">
        {look.logo && <img class="logo" src={look.logo} alt={`${props.page?.organization.name ?? ''} logo`} />}
        <Heading>{look.headline}</Heading>
        {look.text && <p>{look.text}</p>}
        {props.children}
      </div>
    </Frame>
  );
}

/** The invitation's primary button, in the organization's colour and words. */
export function BrandedButton(props: {
  look: ReturnType<typeof brandedLook>;
  onClick: () => void;
  disabled?: boolean;
}) {
  return (
    <button
      type="button"
      style={{ background: props.look.color, borderColor: props.look.color }}
      onClick={props.onClick}
      disabled={props.disabled}
    >
      {props.look.button}
    </button>
  );
}
