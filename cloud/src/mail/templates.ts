/**
 * Mail templates: plain text and HTML from one set of localised strings per message kind.
 * A locale missing a kind (or an unknown locale) falls back to English. Variables are
 * `{name}` placeholders; in HTML every value is escaped, and only http(s) URLs become links.
 */
export type MailKind =
  | 'verify_email'
  | 'password_reset'
  | 'invitation'
  | 'transfer_request'
  | 'transfer_outcome'
  | 'new_sign_in'
  | 'mfa_changed';

interface Strings {
  subject: string;
  /** paragraphs; the one action (a link) comes after them */
  body: string[];
  action?: string;
  footer?: string;
}

type Catalog = Partial<Record<MailKind, Strings>>;

const en: Catalog = {
  verify_email: {
    subject: 'Confirm your e-mail address',
    body: ['Please confirm that {email} is your address.', 'The link works once and expires in {hours} hours.'],
    action: 'Confirm my address',
    footer: 'If you did not create an account, ignore this message.',
  },
  password_reset: {
    subject: 'Reset your password',
    body: [
      'Someone (hopefully you) asked to reset the password of {email}.',
      'The link works once and expires in {minutes} minutes. Setting a new password signs out every session.',
    ],
    action: 'Choose a new password',
    footer: 'If you did not ask for this, ignore this message: your password stays as it is.',
  },
  invitation: {
    subject: '{inviter} invited you to {org}',
    body: ['{headline}', '{inviter} invited {email} to join {org} as {role}.', 'The invitation expires on {expires}.'],
    action: '{button}',
  },
  transfer_request: {
    subject: '{sender} wants to hand over a {resource} to you',
    body: [
      '{sender} wants to transfer the {resource} "{name}" to {email}.',
      'Sign in with this address to accept or decline it before {expires}.',
    ],
    action: 'Review the transfer',
  },
  transfer_outcome: {
    subject: 'Your transfer to {recipient} was {outcome}',
    body: ['The transfer of the {resource} "{name}" to {recipient} was {outcome}.'],
  },
  new_sign_in: {
    subject: 'New sign-in to your account',
    body: [
      'Your account {email} was signed in from a new device: {device} ({address}) at {at}.',
      'If this was not you, change your password and end that session.',
    ],
  },
  mfa_changed: {
    subject: 'Two-step sign-in {change}',
    body: [
      'Two-step sign-in (TOTP) was {change} on your account {email} at {at}.',
      'If this was not you, reset your password at once.',
    ],
  },
};

const de: Catalog = {
  verify_email: {
    subject: 'Bestätigen Sie Ihre E-Mail-Adresse',
    body: [
      'Bitte bestätigen Sie, dass {email} Ihre Adresse ist.',
      'Der Link funktioniert einmal und läuft in {hours} Stunden ab.',
    ],
    action: 'Adresse bestätigen',
    footer: 'Wenn Sie kein Konto angelegt haben, ignorieren Sie diese Nachricht.',
  },
  password_reset: {
    subject: 'Passwort zurücksetzen',
    body: [
      'Jemand (hoffentlich Sie) möchte das Passwort von {email} zurücksetzen.',
      'Der Link funktioniert einmal und läuft in {minutes} Minuten ab. Ein neues Passwort beendet alle Sitzungen.',
    ],
    action: 'Neues Passwort wählen',
    footer: 'Wenn Sie das nicht angefordert haben, ignorieren Sie diese Nachricht.',
  },
};

const catalogs: Record<string, Catalog> = { en, de };

/** The best supported locale for an Accept-Language header ("de-CH,de;q=0.9,en;q=0.8" → de). */
export function pickLocale(acceptLanguage: string | undefined | null): string {
  if (!acceptLanguage) return 'en';
  const ranked = acceptLanguage
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = Number(
        params
          .find((p) => p.trim().startsWith('q='))
          ?.trim()
          .slice(2) ?? '1',
      );
      return { lang: tag.trim().toLowerCase().split('-')[0], q: Number.isFinite(q) ? q : 0, i };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return ranked.find((r) => r.lang in catalogs)?.lang ?? 'en';
}

export interface Branding {
  /** an http(s) logo URL */
  logoUrl?: string | null;
  /** a CSS colour (validated by the organization schema) */
  color?: string | null;
  /** who the mail is from, shown at the top */
  name?: string | null;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
const fill = (template: string, vars: Record<string, string>) =>
  template.replace(/\{(\w+)\}/g, (_m, k: string) => vars[k] ?? '');
const isHttpUrl = (u: string) => /^https?:\/\//i.test(u);
/** Colours are validated where organizations are saved; this is a second, stricter fence for a style attribute. */
const safeColor = (c: string | null | undefined) => (c && /^[#a-zA-Z0-9(),.%\s-]{1,64}$/.test(c) ? c : '#1f6feb');

export function renderMail(
  kind: MailKind,
  locale: string,
  vars: Record<string, string>,
  opts: { link?: string; branding?: Branding } = {},
): RenderedMail {
  const strings = catalogs[locale]?.[kind] ?? (en[kind] as Strings);
  const subject = fill(strings.subject, vars).replace(/[\r\n]+/g, ' ');
  const paragraphs = strings.body.map((p) => fill(p, vars)).filter((p) => p.trim() !== '');
  const action = strings.action ? fill(strings.action, vars) : '';
  const footer = strings.footer ? fill(strings.footer, vars) : '';
  const link = opts.link && isHttpUrl(opts.link) ? opts.link : undefined;
  const text =
    [
      ...(opts.branding?.name ? [opts.branding.name, ''] : []),
      ...paragraphs.flatMap((p) => [p, '']),
      ...(link ? [`${action}: ${link}`, ''] : []),
      ...(footer ? [footer] : []),
    ]
      .join('\n')
      .trimEnd() + '\n';
  const color = safeColor(opts.branding?.color);
  const logo =
    opts.branding?.logoUrl && isHttpUrl(opts.branding.logoUrl)
      ? `<p><img src="${escapeHtml(opts.branding.logoUrl)}" alt="${escapeHtml(opts.branding.name ?? '')}" style="max-height:48px"></p>`
      : opts.branding?.name
        ? `<p style="font-weight:bold;color:${color}">${escapeHtml(opts.branding.name)}</p>`
        : '';
  const html = [
    `<!doctype html><html lang="${escapeHtml(locale)}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family:sans-serif;line-height:1.5">',
    logo,
    ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    link
      ? `<p><a href="${escapeHtml(link)}" style="display:inline-block;padding:8px 16px;background:${color};color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(action)}</a></p><p style="font-size:small">${escapeHtml(link)}</p>`
      : '',
    footer ? `<p style="font-size:small;color:#666">${escapeHtml(footer)}</p>` : '',
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}
