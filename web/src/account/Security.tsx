import { useEffect, useState } from 'preact/hooks';
import { z } from 'zod';
import { BackupCodes, Session as SessionSchema, TotpEnrolment } from '@smarthome/protocol/auth';
import { MessageBody } from '@smarthome/protocol/common';
import { api, describe } from '../api/http.ts';
import { Field } from '../app/Field.tsx';
import { Alert } from '../app/Alert.tsx';

type Enrolment = z.infer<typeof TotpEnrolment>;
type Session = z.infer<typeof SessionSchema>;

/** The password re-check the API takes in X-Account-Verification. */
const verified = (secret: string) => ({ 'x-account-verification': secret });

/**
 * Two-step sign-in: enrol (password → QR code and secret → a first code), disable (password and
 * a code or backup code), and backup codes (shown once). `onChange` reloads the account.
 */
export function MfaSection({ enabled, onChange }: { enabled: boolean; onChange: () => Promise<void> }) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [backupPassword, setBackupPassword] = useState('');
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (e: Event, call: () => Promise<void>) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      await call();
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  const start = (e: Event) =>
    run(e, async () => {
      setEnrolment(
        await api('POST', '/v1/account/mfa/totp', { headers: verified(password), schema: TotpEnrolment, org: null }),
      );
      setCode('');
    });
  const confirm = (e: Event) =>
    run(e, async () => {
      const r = await api('POST', '/v1/account/mfa/totp/confirm', { body: { code }, schema: MessageBody, org: null });
      setEnrolment(null);
      setPassword('');
      setCode('');
      setDone(r.message);
      await onChange();
    });
  const disable = (e: Event) =>
    run(e, async () => {
      const r = await api('POST', '/v1/account/mfa/totp/disable', {
        headers: verified(password),
        body: { code },
        schema: MessageBody,
        org: null,
      });
      setPassword('');
      setCode('');
      setCodes(null);
      setDone(r.message);
      await onChange();
    });
  const backup = (e: Event) =>
    run(e, async () => {
      const r = await api('POST', '/v1/account/mfa/backup-codes', {
        headers: verified(backupPassword),
        schema: BackupCodes,
        org: null,
      });
      setCodes(r.codes);
      setBackupPassword('');
    });
  const passwordField = (
    <Field
      label="Current password"
      name="mfa-password"
      type="password"
      auto="current-password"
      value={password}
      set={setPassword}
    />
  );
  return (
    <section class="card" aria-labelledby="mfa-title">
      <h2 id="mfa-title">Two-step sign-in</h2>
      <p>
        Status: <span class={`badge ${enabled ? 'online' : 'offline'}`}>{enabled ? 'on' : 'off'}</span>
      </p>
      <Alert message={error} />
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
      {!enabled && !enrolment && (
        <form onSubmit={start}>
          <p class="note">Sign-in will ask for a code from an authenticator app after the password.</p>
          {passwordField}
          <button type="submit" disabled={busy}>
            Set up an authenticator app
          </button>
        </form>
      )}
      {!enabled && enrolment && (
        <form onSubmit={confirm}>
          <p>Scan this code with the app, or type the key, then enter the code the app shows.</p>
          {/* the API's SVG as an image: it cannot run script, and data: images are allowed by the CSP */}
          <img
            class="qr"
            src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(enrolment.qr_svg)}`}
            alt="QR code for the authenticator app"
            width={200}
            height={200}
          />
          <p>
            Key: <code class="totp-secret">{enrolment.secret}</code>
          </p>
          <Field label="Code from the app" name="mfa-code" auto="one-time-code" value={code} set={setCode} />
          <button type="submit" disabled={busy}>
            Turn on
          </button>
        </form>
      )}
      {enabled && (
        <form onSubmit={disable}>
          <h3>Turn off</h3>
          {passwordField}
          <Field label="Code from the app or a backup code" name="mfa-off-code" value={code} set={setCode} />
          <button type="submit" class="danger" disabled={busy}>
            Turn off two-step sign-in
          </button>
        </form>
      )}
      <form onSubmit={backup}>
        <h3>Backup codes</h3>
        <p class="note">Ten codes that each sign in once without the app. New codes replace the old ones.</p>
        <Field
          label="Current password (for backup codes)"
          name="backup-password"
          type="password"
          auto="current-password"
          value={backupPassword}
          set={setBackupPassword}
        />
        <button type="submit" class="secondary" disabled={busy}>
          Make new backup codes
        </button>
      </form>
      {codes && (
        <div class="secret" role="status">
          <p>
            Backup codes, shown <strong>only now</strong>:
          </p>
          <ul class="codes">
            {codes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

/** The account's sign-in sessions: where and when, revoked one by one or all but this one. */
export function SessionsSection() {
  const [sessions, setSessions] = useState<Session[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = async () => {
    try {
      setSessions(await api('GET', '/v1/account/sessions', { schema: z.array(SessionSchema), org: null }));
    } catch (err) {
      setError(describe(err));
    }
  };
  useEffect(() => {
    void load();
  }, []);
  const end = async (path: string) => {
    setError(null);
    try {
      await api('DELETE', path, { org: null });
      await load();
    } catch (err) {
      setError(describe(err));
    }
  };
  const others = sessions?.filter((s) => !s.current).length ?? 0;
  return (
    <section class="card" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Signed-in devices</h2>
      <Alert message={error} />
      <ul class="rows sessions">
        {sessions?.map((s) => (
          <li key={s.id}>
            <span class="entity-name">{s.user_agent ?? 'unknown device'}</span>
            <span class="note">
              {s.client_address ?? 'unknown address'} · since {new Date(s.created_at).toLocaleString()} · last used{' '}
              {new Date(s.last_used_at).toLocaleString()}
            </span>
            {s.current ? (
              <span class="badge online">this device</span>
            ) : (
              <button
                type="button"
                class="danger"
                onClick={() => void end(`/v1/account/sessions/${encodeURIComponent(s.id)}`)}
                aria-label={`Sign out ${s.user_agent ?? 'the unknown device'} at ${s.client_address ?? 'an unknown address'}`}
              >
                Sign out
              </button>
            )}
          </li>
        ))}
      </ul>
      {others > 0 && (
        <button type="button" class="secondary" onClick={() => void end('/v1/account/sessions')}>
          Sign out every other device
        </button>
      )}
    </section>
  );
}
