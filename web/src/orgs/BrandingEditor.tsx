import { useState } from 'preact/hooks';
import type { z } from 'zod';
import { BrandingBody, type OrganizationWithRole } from '@smarthome/protocol/orgs';
import { api, describe } from '../api/http.ts';
import { BrandedButton, BrandedInvitation, brandedLook, type InvitationView } from './BrandedInvitation.tsx';
import './orgs.css';
import { Alert } from '../app/Alert.tsx';

type Org = z.infer<typeof OrganizationWithRole>;
type Group = 'branding' | 'inviteBranding';

/** The write shape's leaf fields (spec "Organization branding"), in the order the form shows them. */
const FIELDS: Array<{ group: Group; key: string; label: string; kind: 'url' | 'color' | 'text' }> = [
  { group: 'branding', key: 'logoUrl', label: 'Logo URL', kind: 'url' },
  { group: 'branding', key: 'darkLogoUrl', label: 'Logo URL for dark mode', kind: 'url' },
  { group: 'branding', key: 'favicon', label: 'Favicon URL', kind: 'url' },
  { group: 'branding', key: 'darkFavicon', label: 'Favicon URL for dark mode', kind: 'url' },
  { group: 'branding', key: 'color', label: 'Button colour', kind: 'color' },
  { group: 'branding', key: 'darkColor', label: 'Button colour for dark mode', kind: 'color' },
  { group: 'inviteBranding', key: 'headline', label: 'Headline', kind: 'text' },
  { group: 'inviteBranding', key: 'subheadline', label: 'Text under the headline', kind: 'text' },
  { group: 'inviteBranding', key: 'primaryButtonLabel', label: 'Button label', kind: 'text' },
  { group: 'inviteBranding', key: 'backgroundImageUrl', label: 'Background image URL', kind: 'url' },
  { group: 'inviteBranding', key: 'pageBackgroundColor', label: 'Background colour', kind: 'color' },
];

const id = (f: { group: Group; key: string }) => `${f.group}.${f.key}`;

/** The form's strings as the write shape: an empty field is null (cleared), as the API's merge reads it. */
function toBody(values: Record<string, string>) {
  const body: { branding: Record<string, string | null>; inviteBranding: Record<string, string | null> } = {
    branding: {},
    inviteBranding: {},
  };
  for (const f of FIELDS) body[f.group][f.key] = values[id(f)]?.trim() || null;
  return body;
}

/** The API's own check (protocol's BrandingBody), worded as the API's 400 words it: `path: message` per field. */
function problemsOf(values: Record<string, string>): Map<string, string> {
  const result = BrandingBody.safeParse(toBody(values));
  const out = new Map<string, string>();
  if (!result.success)
    for (const issue of result.error.issues) {
      const path = issue.path.join('.');
      if (!out.has(path)) out.set(path, `${path}: ${issue.message}`);
    }
  return out;
}

/** Admin only: the organization's branding with a live preview that is the public invitation page's own component. */
export function BrandingEditor({ org, onSaved }: { org: Org; onSaved: () => Promise<void> }) {
  const [values, setValues] = useState<Record<string, string>>(() => {
    const v: Record<string, string> = {};
    for (const f of FIELDS) v[id(f)] = (org[f.group] as Record<string, string | null | undefined>)[f.key] ?? '';
    return v;
  });
  const [dark, setDark] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const problems = problemsOf(values);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    if (problems.size) {
      setError([...problems.values()][0]!);
      return;
    }
    try {
      await api('PATCH', `/v1/organizations/${encodeURIComponent(org.id)}/branding`, { body: toBody(values) });
      setSaved(true);
      await onSaved();
    } catch (err) {
      setError(describe(err));
    }
  };
  // (the problem sits outside the label: it describes the field, it is not its name)
  // the preview shows only what the API would take (an invalid URL is not loaded)
  const body = toBody(values);
  const valid = (group: Group) =>
    Object.fromEntries(Object.entries(body[group]).filter(([k, v]) => v !== null && !problems.has(`${group}.${k}`)));
  const preview: InvitationView = {
    organization: { id: org.id, name: org.name, description: org.description },
    branding: valid('branding'),
    inviteBranding: valid('inviteBranding'),
    email: 'invitee@example.com',
    role: 'member',
  };
  return (
    <section class="card" aria-labelledby="branding-h">
      <h2 id="branding-h">Branding</h2>
      <p class="note">
        Shown on the invitation page and in the invitation mail. Leave a field empty to use the default.
      </p>
      <div class="branding">
        <form onSubmit={save} noValidate>
          {FIELDS.map((f) => {
            const problem = problems.get(id(f));
            return (
              <div key={id(f)} class="field">
                <label>
                  {f.label}
                  <input
                    name={id(f)}
                    type={f.kind === 'url' ? 'url' : 'text'}
                    inputMode={f.kind === 'url' ? 'url' : undefined}
                    placeholder={f.kind === 'color' ? '#1f5fcc' : f.kind === 'url' ? 'https://…' : undefined}
                    value={values[id(f)]}
                    aria-invalid={problem ? true : undefined}
                    aria-describedby={problem ? `${id(f)}-problem` : undefined}
                    onInput={(e) => setValues({ ...values, [id(f)]: (e.currentTarget as HTMLInputElement).value })}
                  />
                </label>
                {problem && (
                  <span class="error" id={`${id(f)}-problem`}>
                    {problem}
                  </span>
                )}
              </div>
            );
          })}
          <Alert message={error} />
          {saved && (
            <p class="ok" role="status">
              Branding saved.
            </p>
          )}
          <button type="submit">Save branding</button>
        </form>
        <div>
          <h3>Preview</h3>
          <label class="check">
            <input
              type="checkbox"
              checked={dark}
              onChange={(e) => setDark((e.currentTarget as HTMLInputElement).checked)}
            />
            as in dark mode
          </label>
          <BrandedInvitation page={preview} dark={dark} as="div">
            <p class="actions">
              <BrandedButton look={brandedLook(preview, dark)} onClick={() => undefined} />
            </p>
          </BrandedInvitation>
        </div>
      </div>
    </section>
  );
}
