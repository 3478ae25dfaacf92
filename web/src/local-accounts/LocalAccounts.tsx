import { useEffect, useState } from 'preact/hooks';
import { z } from 'zod';
import { MessageBody } from '@smarthome/protocol/common';
import { LocalAccount } from '@smarthome/protocol/local-accounts';
import { api, describe } from '../api/http.ts';
import { Field } from '../app/Field.tsx';
import { Alert } from '../app/Alert.tsx';

type Account = z.infer<typeof LocalAccount>;

/** The edge's Account page: your own password; for owners, the home's local accounts. */
export function LocalAccountPage() {
  const [me, setMe] = useState<Account | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api('GET', '/v1/local/account', { schema: LocalAccount }).then(setMe, (e: unknown) => setError(describe(e)));
  }, []);
  return (
    <div>
      <h1>Account</h1>
      <Alert message={error} />
      {me && (
        <section class="card">
          <h2>You</h2>
          <p>
            {me.username} <span class="note">({me.role === 'owner' ? 'owner of this home' : 'member'})</span>
          </p>
        </section>
      )}
      {me && <PasswordSection />}
      {me?.role === 'owner' && <AccountsSection me={me} />}
    </div>
  );
}

function PasswordSection() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setDone(null);
    if (next !== repeat) return setError('The two new passwords differ.');
    try {
      const body = { current_password: current, new_password: next };
      setDone((await api('POST', '/v1/local/account/password', { body, schema: MessageBody })).message);
      setCurrent('');
      setNext('');
      setRepeat('');
    } catch (err) {
      setError(describe(err));
    }
  };
  return (
    <section class="card">
      <h2>Change your password</h2>
      <form onSubmit={submit}>
        <Field
          label="Current password"
          name="current-password"
          type="password"
          auto="current-password"
          value={current}
          set={setCurrent}
        />
        <Field
          label="New password"
          name="new-password"
          type="password"
          auto="new-password"
          value={next}
          set={setNext}
        />
        <Field
          label="Repeat the new password"
          name="repeat-password"
          type="password"
          auto="new-password"
          value={repeat}
          set={setRepeat}
        />
        <Alert message={error} />
        {done && (
          <p class="ok" role="status">
            {done}
          </p>
        )}
        <button type="submit">Change password</button>
      </form>
    </section>
  );
}

function AccountsSection({ me }: { me: Account }) {
  const [list, setList] = useState<Account[] | null>(null);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<'user' | 'owner'>('user');
  const [error, setError] = useState<string | null>(null);
  const run = async (work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
      setList(await api('GET', '/v1/local/accounts', { schema: z.array(LocalAccount) }));
    } catch (err) {
      setError(describe(err));
    }
  };
  useEffect(() => void run(async () => undefined), []);
  const create = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api('POST', '/v1/local/accounts', { body: { username, password, role }, schema: LocalAccount });
      setUsername('');
      setPassword('');
    });
  };
  const remove = (a: Account) => {
    // deleting also signs that person out everywhere: worth one question
    if (confirm(`Delete the local account ${a.username}? Its sessions end at once.`))
      void run(() => api('DELETE', `/v1/local/accounts/${a.id}`, { schema: MessageBody }));
  };
  return (
    <section class="card" aria-labelledby="local-accounts">
      <h2 id="local-accounts">Local accounts of this home</h2>
      <p class="note">They sign in on this device only, with or without the internet. Owners manage them.</p>
      <Alert message={error} />
      <ul class="rows">
        {list?.map((a) => (
          <li key={a.id}>
            <span class="entity-name">{a.username}</span>
            <span class="note">
              {a.role === 'owner' ? 'owner' : 'member'} · created {new Date(a.created_at).toLocaleDateString()}
              {a.id === me.id ? ' · you' : ''}
            </span>
            <button type="button" class="danger" onClick={() => remove(a)} aria-label={`Delete account ${a.username}`}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      <form onSubmit={create} class="inline">
        <Field label="Username" name="new-username" value={username} set={setUsername} />
        <Field
          label="Password"
          name="new-account-password"
          type="password"
          auto="new-password"
          value={password}
          set={setPassword}
        />
        <label>
          Role
          <select
            name="role"
            value={role}
            onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as 'user' | 'owner')}
          >
            <option value="user">member</option>
            <option value="owner">owner</option>
          </select>
        </label>
        <button type="submit">Add account</button>
      </form>
    </section>
  );
}
