import { useState } from 'preact/hooks';
import { MessageBody } from '@smarthome/protocol/common';
import { ApiError, api, describe } from '../api/http.ts';
import { Field } from '../app/Field.tsx';
import { onLink } from '../app/router.ts';
import { useWait } from './SignIn.tsx';
import { Alert } from '../app/Alert.tsx';

/** The token of a mailed link (?token=…), or null. */
export const linkToken = (): string | null => new URLSearchParams(location.search).get('token');

function Outcome({ error, done }: { error: string | null; done: string | null }) {
  return (
    <>
      <Alert message={error} />
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
    </>
  );
}

/**
 * /verify-email?token=… (the link of the verification mail). The address is confirmed by a
 * click, not on load: mail scanners that open links must not use up the single-use token.
 */
export function VerifyEmailPage({ signedIn }: { signedIn: boolean }) {
  const token = linkToken();
  const [error, setError] = useState<string | null>(
    token ? null : 'This link has no token: open the link of the mail.',
  );
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const verify = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await api('POST', '/v1/auth/verify-email', {
        anonymous: true,
        body: { token },
        schema: MessageBody,
      });
      setDone(`Your address is confirmed (${r.message}).`);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="narrow">
      <h1>Confirm your e-mail address</h1>
      <p>Confirming lets you accept the invitations and transfers sent to this address.</p>
      <Outcome error={error} done={done} />
      {!done && token && (
        <button type="button" disabled={busy} onClick={() => void verify()}>
          Confirm my address
        </button>
      )}
      {done && (
        <p>
          <a href={signedIn ? '/' : '/signin'} onClick={onLink}>
            {signedIn ? 'Open your dashboard' : 'Sign in'}
          </a>
        </p>
      )}
    </main>
  );
}

/** /reset-password: without a token, asks for the address to mail a link to; with ?token=…, sets the new password. */
export function ResetPasswordPage() {
  const token = linkToken();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [wait, setWait] = useWait();
  const run = async (e: Event, call: () => Promise<string>) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setDone(await call());
    } catch (err) {
      if (err instanceof ApiError && err.status === 429 && err.retryAfter) setWait(err.retryAfter);
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  const request = (e: Event) =>
    run(e, async () => {
      const r = await api('POST', '/v1/auth/password-reset', { anonymous: true, body: { email }, schema: MessageBody });
      // the API answers the same whether the address has an account or not: its words say so
      return `Check your mail: ${r.message}.`;
    });
  const confirm = (e: Event) =>
    run(e, async () => {
      if (password !== repeat) throw new Error('The two passwords differ.');
      const r = await api('POST', '/v1/auth/password-reset/confirm', {
        anonymous: true,
        body: { token, password },
        schema: MessageBody,
      });
      return `Done: ${r.message}.`;
    });
  return (
    <main class="narrow">
      <h1>{token ? 'Choose a new password' : 'Reset your password'}</h1>
      {done ? (
        <>
          <Outcome error={null} done={done} />
          {token && (
            <p>
              <a href="/signin" onClick={onLink}>
                Sign in with the new password
              </a>
            </p>
          )}
        </>
      ) : token ? (
        <form onSubmit={confirm}>
          <Field
            label="New password"
            name="password"
            type="password"
            auto="new-password"
            value={password}
            set={setPassword}
          />
          <Field
            label="Repeat the new password"
            name="repeat"
            type="password"
            auto="new-password"
            value={repeat}
            set={setRepeat}
          />
          <p class="note">Setting it signs out every session of the account.</p>
          <Outcome error={error} done={null} />
          <button type="submit" disabled={busy}>
            Set the new password
          </button>
        </form>
      ) : (
        <form onSubmit={request}>
          <Field label="E-mail" name="email" type="email" auto="email" value={email} set={setEmail} />
          <Outcome error={error} done={null} />
          {wait > 0 && (
            <p class="note" role="status">
              You can try again in {wait} s.
            </p>
          )}
          <button type="submit" disabled={busy || wait > 0}>
            Mail me a link
          </button>
        </form>
      )}
      {!done && (
        <p>
          <a href="/signin" onClick={onLink}>
            Back to sign-in
          </a>
        </p>
      )}
    </main>
  );
}
