import { useEffect, useState } from 'preact/hooks';
import { TokenResponse } from '@smarthome/protocol/auth';
import { LocalSession } from '@smarthome/protocol/local-accounts';
import { ApiError, api, describe } from '../api/http.ts';
import { session, type PortalKind } from '../api/session.ts';
import { navigate, nextPath, onLink } from '../app/router.ts';
import { Alert } from '../app/Alert.tsx';

/** Counts a 429's Retry-After down, so the wait is shown rather than a bare error. */
export function useWait(): [number, (seconds: number) => void] {
  const [left, setLeft] = useState(0);
  useEffect(() => {
    if (left <= 0) return;
    const t = setTimeout(() => setLeft(left - 1), 1000);
    return () => clearTimeout(t);
  }, [left]);
  return [left, setLeft];
}

export function SignIn({ kind }: { kind: PortalKind }) {
  const [who, setWho] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [wait, setWait] = useWait();
  // the cloud answers 401 mfa_required when the account has TOTP: then the same request with a code
  const [mfa, setMfa] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (kind === 'cloud') {
        const t = await api('POST', '/v1/auth/token', {
          anonymous: true,
          schema: TokenResponse,
          body: { grant_type: 'password', email: who, password, ...(mfa !== null ? { mfa_code: mfa } : {}) },
        });
        session.set({ access_token: t.access_token, refresh_token: t.refresh_token, who: t.user.email, org: null });
      } else {
        const t = await api('POST', '/v1/local/auth/token', {
          anonymous: true,
          schema: LocalSession,
          body: { username: who, password },
        });
        session.set({ access_token: t.access_token, who: t.account.username, org: null });
      }
      navigate(nextPath(), true);
    } catch (err) {
      if (err instanceof ApiError && err.status === 429 && err.retryAfter) setWait(err.retryAfter);
      if (err instanceof ApiError && err.message === 'mfa_required' && mfa === null) {
        setMfa('');
        return;
      }
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="narrow">
      <h1>Sign in</h1>
      <form onSubmit={submit}>
        <label>
          {kind === 'cloud' ? 'E-mail' : 'Username'}
          <input
            name="who"
            type={kind === 'cloud' ? 'email' : 'text'}
            autocomplete="username"
            required
            value={who}
            onInput={(e) => setWho((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        {mfa !== null && (
          <label>
            Code from your authenticator app (or a backup code)
            <input
              name="mfa-code"
              autocomplete="one-time-code"
              inputMode="numeric"
              required
              autoFocus
              value={mfa}
              onInput={(e) => setMfa((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
        )}
        <Alert message={error} />
        {wait > 0 && (
          <p class="note" role="status">
            You can try again in {wait} s.
          </p>
        )}
        <button type="submit" disabled={busy || wait > 0}>
          Sign in
        </button>
      </form>
      {kind === 'cloud' ? (
        <p>
          No account yet?{' '}
          <a href={`/register${location.search}`} onClick={onLink}>
            Create one
          </a>
          {' · '}
          <a href="/reset-password" onClick={onLink}>
            Forgot your password?
          </a>
        </p>
      ) : (
        <p class="note">
          Local accounts of this home work without the internet. The owner adds them (or run{' '}
          <code>smarthome-edge account create</code>).
        </p>
      )}
    </main>
  );
}

export function Register() {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('POST', '/v1/auth/register', { anonymous: true, body: { email, password, ...(name ? { name } : {}) } });
      const t = await api('POST', '/v1/auth/token', {
        anonymous: true,
        schema: TokenResponse,
        body: { grant_type: 'password', email, password },
      });
      session.set({ access_token: t.access_token, refresh_token: t.refresh_token, who: t.user.email, org: null });
      navigate(nextPath(), true);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="narrow">
      <h1>Create an account</h1>
      <form onSubmit={submit}>
        <label>
          E-mail
          <input
            name="email"
            type="email"
            autocomplete="email"
            required
            value={email}
            onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label>
          Name (optional)
          <input
            name="name"
            autocomplete="name"
            value={name}
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="new-password"
            required
            value={password}
            onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <Alert message={error} />
        <button type="submit" disabled={busy}>
          Create account
        </button>
      </form>
      <p>
        Already registered?{' '}
        <a href="/signin" onClick={onLink}>
          Sign in
        </a>
      </p>
    </main>
  );
}
