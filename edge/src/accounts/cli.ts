import type { Readable } from 'node:stream';
import { LocalPassword, LocalUsername } from '@smarthome/protocol/local-accounts';
import { LocalTokenStore } from '../auth/tokens.ts';
import { EdgeDatabase } from '../db/database.ts';
import { ConflictError } from '../errors.ts';
import { LocalAccountStore } from './store.ts';

/** The first line of `input` (the password: piped, never a flag, so it stays out of shell history and `ps`). */
async function firstLine(input: Readable): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += String(chunk);
    const nl = text.indexOf('\n');
    if (nl >= 0) return text.slice(0, nl).replace(/\r$/, '');
  }
  return text;
}

/** `pnpm edge account create <username>`: exit 0 created, 1 refused (exists, bad input). */
export async function createAccountCommand(
  dataDir: string,
  username: string,
  role: 'owner' | 'user',
  input: Readable,
  out: { stdout: (t: string) => void; stderr: (t: string) => void } = {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
  },
): Promise<number> {
  const name = LocalUsername.safeParse(username);
  if (!name.success) {
    out.stderr(`error: ${name.error.issues[0]?.message}\n`);
    return 1;
  }
  if ('isTTY' in input && input.isTTY) out.stderr(`password for ${name.data}: `);
  const password = LocalPassword.safeParse(await firstLine(input));
  if (!password.success) {
    out.stderr(`error: ${password.error.issues[0]?.message}\n`);
    return 1;
  }
  const database = new EdgeDatabase(dataDir);
  database.open();
  try {
    const account = await new LocalAccountStore(database, new LocalTokenStore(database)).create(
      name.data,
      password.data,
      role,
    );
    out.stdout(`${account.username}\n`);
    out.stderr(`created local account "${account.username}" (${account.role}; scrypt-hashed in ${database.file})\n`);
    return 0;
  } catch (err) {
    if (err instanceof ConflictError) {
      out.stderr(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    database.close();
  }
}
