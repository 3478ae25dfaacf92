import { useEffect, useState } from 'preact/hooks';
import { z } from 'zod';
import { Account as AccountSchema, CreatedPersonalAccessToken, PersonalAccessToken } from '@smarthome/protocol/auth';
import { MessageBody } from '@smarthome/protocol/common';
import { api, describe } from '../api/http.ts';
import { BillingSection } from './Billing.tsx';
import { CredentialsSection } from './Credentials.tsx';
import { MfaSection, SessionsSection } from './Security.tsx';
import { Alert } from '../app/Alert.tsx';

type Pat = z.infer<typeof PersonalAccessToken>;

/** Profile, two-step sign-in, sessions, personal access tokens (created: shown once, with copy; revoked at once), plan usage. */
export function AccountPage() {
  const [account, setAccount] = useState<z.infer<typeof AccountSchema> | null>(null);
  const [tokens, setTokens] = useState<Pat[] | null>(null);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = async () => {
    try {
      setAccount(await api('GET', '/v1/account', { schema: AccountSchema }));
      setTokens(await api('GET', '/v1/account/tokens', { schema: z.array(PersonalAccessToken) }));
    } catch (err) {
      setError(describe(err));
    }
  };
  useEffect(() => {
    void load();
  }, []);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const t = await api('POST', '/v1/account/tokens', { body: { name }, schema: CreatedPersonalAccessToken });
      setCreated({ name: t.name, token: t.token });
      setCopied(null);
      setName('');
      await load();
    } catch (err) {
      setError(describe(err));
    }
  };
  const [resent, setResent] = useState<string | null>(null);
  const resend = async () => {
    setError(null);
    try {
      setResent((await api('POST', '/v1/account/email/verification', { schema: MessageBody, org: null })).message);
    } catch (err) {
      setError(describe(err));
    }
  };
  const copy = async (token: string) => {
    try {
      await navigator.clipboard.writeText(token);
      setCopied('Copied.');
    } catch {
      // no clipboard (an insecure origin, or refused): the token stays on the page to select
      setCopied('Copying is not allowed here: select the token and copy it.');
    }
  };
  const revoke = async (id: string) => {
    setError(null);
    try {
      await api('DELETE', `/v1/account/tokens/${encodeURIComponent(id)}`);
      await load();
    } catch (err) {
      setError(describe(err));
    }
  };
  return (
    <div>
      <h1>Account</h1>
      <Alert message={error} />
      {account && (
        <section class="card">
          <h2>Profile</h2>
          <p>
            {account.email}
            {account.name ? ` · ${account.name}` : ''}{' '}
            <span class={`badge ${account.email_verified ? 'online' : 'offline'}`}>
              {account.email_verified ? 'confirmed' : 'not confirmed'}
            </span>
          </p>
          {!account.email_verified && (
            <p>
              <button type="button" class="secondary" onClick={() => void resend()}>
                Mail me a new confirmation link
              </button>
              {resent && (
                <span class="ok" role="status">
                  {' '}
                  {resent}
                </span>
              )}
            </p>
          )}
          <p class="note">
            Organizations:{' '}
            {account.organizations.length
              ? account.organizations.map((o) => `${o.name} (${o.role})`).join(', ')
              : 'none'}
          </p>
        </section>
      )}
      {account && (
        <CredentialsSection
          onChange={async () => setAccount(await api('GET', '/v1/account', { schema: AccountSchema }))}
        />
      )}
      {account && (
        <MfaSection
          enabled={account.mfa_enabled}
          onChange={async () => setAccount(await api('GET', '/v1/account', { schema: AccountSchema }))}
        />
      )}
      <SessionsSection />
      <section class="card">
        <h2>Personal access tokens</h2>
        <p class="note">For scripts and integrations: a token acts as you until you revoke it.</p>
        {tokens?.length === 0 && <p class="note">No tokens yet.</p>}
        <ul class="rows">
          {tokens?.map((t) => (
            <li key={t.id}>
              <span class="entity-name">{t.name}</span>
              <span class="note">
                created {new Date(t.created_at).toLocaleString()} · last used{' '}
                {t.last_used_at ? new Date(t.last_used_at).toLocaleString() : 'never'}
              </span>
              <button
                type="button"
                class="danger"
                onClick={() => void revoke(t.id)}
                aria-label={`Revoke token ${t.name}`}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
        <form onSubmit={create} class="inline">
          <label>
            Token name
            <input
              name="token-name"
              required
              maxLength={100}
              value={name}
              onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <button type="submit">Create token</button>
        </form>
        {created && (
          <div class="secret" role="status">
            <p>
              Token <strong>{created.name}</strong>, shown <strong>only now</strong>:
            </p>
            <pre>
              <code>{created.token}</code>
            </pre>
            <p>
              <button type="button" class="secondary" onClick={() => void copy(created.token)}>
                Copy token
              </button>{' '}
              {copied && <span class="note">{copied}</span>}
            </p>
          </div>
        )}
      </section>
      <BillingSection />
    </div>
  );
}
