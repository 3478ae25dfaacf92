import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE, REPO_ROOT, spawnReady, type Spawned } from './testing/process.ts';
import { createTestSchema, testDatabaseUrl } from './testing/database.ts';

const postJson = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The account registered before the restart logs in on the restarted process, which then stops cleanly. */
async function expectLoginThenStop(p: Spawned, email: string): Promise<void> {
  const login = await postJson(`http://127.0.0.1:${p.ready.http}/v1/auth/token`, {
    grant_type: 'password',
    email,
    password: 'password123',
  });
  expect(login.status).toBe(200);
  p.child.kill('SIGTERM');
  expect(await p.exit).toBe(0);
}

async function runToExit(args: string[]): Promise<{ code: unknown; err: string }> {
  const child = spawn(NODE, [path.join(REPO_ROOT, 'cloud/src/main.ts'), ...args]);
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  const code = await new Promise((r) => child.once('exit', r));
  return { code, err };
}

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-proc-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('pnpm cloud process', () => {
  it('prints ready with the bound port, serves, and exits 0 on SIGTERM after finishing in-flight work', async () => {
    const dataDir = tmp();
    const p = await spawnReady('cloud/src/main.ts', ['--port', '0', '--data-dir', dataDir]);
    expect(p.ready.http).toBeGreaterThan(0);
    const base = `http://127.0.0.1:${p.ready.http}`;
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    // Registration runs the full-cost scrypt: still in flight when SIGTERM arrives.
    const inflight = postJson(`${base}/v1/auth/register`, { email: 'inflight@example.test', password: 'password123' });
    await new Promise((r) => setTimeout(r, 15));
    p.child.kill('SIGTERM');
    const res = await inflight;
    expect(res.status).toBe(201);
    expect(await p.exit).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'cloud.db'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'jwt-signing-key.json'))).toBe(true);
    // The account was committed: a second start on the same data dir knows it.
    const again = await spawnReady('cloud/src/main.ts', ['--data-dir', dataDir], { PORT: '0' });
    await expectLoginThenStop(again, 'inflight@example.test');
  });

  it('logs and ignores more SIGTERM/SIGINTs while stopping, and still finishes the request in flight', async () => {
    const dataDir = tmp();
    const p = await spawnReady('cloud/src/main.ts', ['--port', '0', '--data-dir', dataDir], {}, 60_000);
    const base = `http://127.0.0.1:${p.ready.http}`;
    // the full-cost scrypt of a registration keeps the stop waiting for it
    const inflight = postJson(`${base}/v1/auth/register`, { email: 'twice@example.test', password: 'password123' });
    await new Promise((r) => setTimeout(r, 15));
    p.child.kill('SIGTERM');
    p.child.kill('SIGINT');
    expect((await inflight).status).toBe(201);
    expect(await p.exit).toBe(0);
    const lines = p
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string });
    expect(lines.filter((l) => /while stopping: ignored/.test(l.msg))).toHaveLength(1);
  }, 90_000);

  it('says clearly when the port is taken, without a stack trace', async () => {
    const first = await spawnReady('cloud/src/main.ts', ['--port', '0', '--data-dir', tmp()]);
    const { code, err } = await runToExit(['--port', String(first.ready.http), '--data-dir', tmp()]);
    expect(code).toBe(1);
    expect(err.trim()).toBe(`error: port ${first.ready.http} is already in use (try --port 0)`);
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);
  });

  it('refuses a --database-url that is not PostgreSQL', async () => {
    const { code, err } = await runToExit([
      '--port',
      '0',
      '--data-dir',
      tmp(),
      '--database-url',
      'mysql://127.0.0.1/x',
    ]);
    expect(code).toBe(2);
    expect(err.trim()).toBe(
      'error: --database-url must be a postgres:// (or postgresql://) URL; omit it to use the embedded SQLite database in --data-dir',
    );
  });

  it('says in one line when PostgreSQL cannot be reached, without the password', async () => {
    const { code, err } = await runToExit([
      '--port',
      '0',
      '--data-dir',
      tmp(),
      '--database-url',
      'postgres://app:s3cret@127.0.0.1:1/x',
    ]);
    expect(code).toBe(1);
    expect(err.split('\n').filter(Boolean)).toHaveLength(1);
    expect(err).toMatch(/^error: cannot reach PostgreSQL at postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/x: /);
  });

  it.skipIf(!testDatabaseUrl())(
    'runs on PostgreSQL with --database-url (DATABASE_URL), keeping data across restarts [needs DATABASE_URL]',
    async () => {
      const schema = await createTestSchema(testDatabaseUrl()!);
      try {
        const dataDir = tmp();
        const first = await spawnReady('cloud/src/main.ts', [
          '--port',
          '0',
          '--data-dir',
          dataDir,
          '--database-url',
          schema.url,
        ]);
        const base = `http://127.0.0.1:${first.ready.http}`;
        expect(
          (await postJson(`${base}/v1/auth/register`, { email: 'pg@example.test', password: 'password123' })).status,
        ).toBe(201);
        first.child.kill('SIGTERM');
        expect(await first.exit).toBe(0);
        expect(fs.existsSync(path.join(dataDir, 'cloud.db'))).toBe(false);
        const again = await spawnReady('cloud/src/main.ts', ['--port', '0', '--data-dir', dataDir], {
          DATABASE_URL: schema.url,
        });
        await expectLoginThenStop(again, 'pg@example.test');
      } finally {
        await schema.drop();
      }
    },
  );

  it('refuses unknown flags with a one-line error', async () => {
    const { code, err } = await runToExit(['--bogus']);
    expect(code).toBe(2);
    expect(err).toMatch(/^error: .*bogus/);
    expect(err.split('\n').filter(Boolean)).toHaveLength(1);
  });
});
