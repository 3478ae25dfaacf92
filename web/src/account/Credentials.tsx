import { useState } from 'preact/hooks';
import { MessageBody } from '@smarthome/protocol/common';
import { api, describe } from '../api/http.ts';
import { Field } from '../app/Field.tsx';

/** The password re-check the API takes in X-Account-Verification. */
const verified = (secret: string) => ({ 'x-account-verification': secret });

/**
 * Change the password (other sign-ins end; this one stays) and the e-mail address (unconfirmed
 * until the link mailed to the new address is followed). `onChange` reloads the account.
 */
export function CredentialsSection({ onChange }: { onChange: () => Promise<void> }) {
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [emailCurrent, setEmailCurrent] = useState('');
  const [email, setEmail] = useState('');
  const [error, setError] = useState<{ form: 'password' | 'email'; text: string } | null>(null);
  const [done, setDone] = useState<{ form: 'password' | 'email'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (e: Event, form: 'password' | 'email', call: () => Promise<string>) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setDone({ form, text: await call() });
    } catch (err) {
      setError({ form, text: describe(err) });
    } finally {
      setBusy(false);
    }
  };
  const changePassword = (e: Event) =>
    run(e, 'password', async () => {
      const r = await api('POST', '/v1/account/password', {
        headers: verified(current),
        body: { password },
        schema: MessageBody,
        org: null,
      });
      setCurrent('');
      setPassword('');
      return r.message;
    });
  const changeEmail = (e: Event) =>
    run(e, 'email', async () => {
      const r = await api('POST', '/v1/account/email', {
        headers: verified(emailCurrent),
        body: { email },
        schema: MessageBody,
        org: null,
      });
      setEmailCurrent('');
      setEmail('');
      await onChange();
      return r.message;
    });
  // each form shows its own outcome next to it, as the API words it
  const outcome = (form: 'password' | 'email') => (
    <>
      {error?.form === form && (
        <p class="error" role="alert">
          {error.text}
        </p>
      )}
      {done?.form === form && (
        <p class="ok" role="status">
          {done.text}
        </p>
      )}
    </>
  );
  return (
    <section class="card" aria-labelledby="credentials-title">
      <h2 id="credentials-title">Password and sign-in address</h2>
      <form onSubmit={changePassword} aria-labelledby="password-title">
        <h3 id="password-title">Change password</h3>
        <p class="note">Every other signed-in device is signed out; this one stays.</p>
        <Field
          label="Current password (to change it)"
          name="password-current"
          type="password"
          auto="current-password"
          value={current}
          set={setCurrent}
        />
        <Field
          label="New password"
          name="password-new"
          type="password"
          auto="new-password"
          value={password}
          set={setPassword}
        />
        <button type="submit" disabled={busy}>
          Change password
        </button>
        {outcome('password')}
      </form>
      <form onSubmit={changeEmail} aria-labelledby="email-title">
        <h3 id="email-title">Change sign-in address</h3>
        {/* no "e-mail" in these labels: the sign-in form's "E-mail" field must stay the only one */}
        <p class="note">The new address stays unconfirmed until you follow the link mailed to it.</p>
        <Field label="New sign-in address" name="email-new" type="email" auto="email" value={email} set={setEmail} />
        <Field
          label="Current password (to change the address)"
          name="email-password"
          type="password"
          auto="current-password"
          value={emailCurrent}
          set={setEmailCurrent}
        />
        <button type="submit" disabled={busy}>
          Change address
        </button>
        {outcome('email')}
      </form>
    </section>
  );
}
