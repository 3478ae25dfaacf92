import { useState } from 'preact/hooks';
import { LocalSession } from '@smarthome/protocol/local-accounts';
import { api, describe } from '../api/http.ts';
import { session } from '../api/session.ts';
import { navigate } from '../app/router.ts';
import { Alert } from '../app/Alert.tsx';

/** First run of an edge: the home's first local account (its owner), created without any cloud. */
export function Onboarding({ onDone }: { onDone: () => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (password !== repeat) {
      setError('The two passwords differ.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const t = await api('POST', '/v1/local/onboarding', {
        anonymous: true,
        schema: LocalSession,
        body: { username, password },
      });
      session.set({ access_token: t.access_token, who: t.account.username, org: null });
      onDone();
      navigate('/', true);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="narrow">
      <h1>Welcome to your home</h1>
      <p>Create the owner account of this home. It lives on this device only and works without the internet.</p>
      <form onSubmit={submit}>
        <label>
          Username
          <input
            name="username"
            autocomplete="username"
            required
            value={username}
            onInput={(e) => setUsername((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="new-password"
            required
            minLength={8}
            value={password}
            onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label>
          Repeat the password
          <input
            name="repeat"
            type="password"
            autocomplete="new-password"
            required
            value={repeat}
            onInput={(e) => setRepeat((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <Alert message={error} />
        <button type="submit" disabled={busy}>
          Create owner account
        </button>
      </form>
    </main>
  );
}
