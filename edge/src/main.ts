import { LocalTokenStore } from './auth/tokens.ts';
import { parseCommand, USAGE, UsageError } from './cli.ts';
import { EdgeDatabase } from './db/database.ts';
import { backupDatabase, restoreDatabase } from './db/backup.ts';
import { createEdge } from './edge.ts';
import { runMqttOwnerCommand } from './mqtt/owner-cli.ts';
import { PortInUseError } from './errors.ts';

/** `pnpm edge …`: one process, one edge. stdout carries only the ready line (or CLI output). */
async function main(): Promise<number> {
  let command;
  try {
    command = parseCommand(process.argv.slice(2), process.env);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n${USAGE}\n`);
      return 2;
    }
    throw err;
  }

  if (command.kind === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }

  if (command.kind === 'backup') {
    const { file, bytes } = await backupDatabase(command.dataDir, command.out);
    process.stdout.write(`${file}\n`);
    process.stderr.write(`backed up the edge database (${bytes} bytes)\n`);
    return 0;
  }

  if (command.kind === 'restore') {
    const file = restoreDatabase(command.from, command.dataDir);
    process.stderr.write(`restored ${command.from} to ${file}; start the edge to use it\n`);
    return 0;
  }

  if (command.kind === 'mqtt-owner') {
    return runMqttOwnerCommand(command, { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) });
  }

  if (command.kind === 'token-create') {
    const database = new EdgeDatabase(command.dataDir);
    database.open();
    try {
      const { token } = new LocalTokenStore(database).create(command.name);
      process.stdout.write(token + '\n');
      process.stderr.write(`created local API token "${command.name}" (shown once; stored hashed in ${database.file})\n`);
    } finally {
      database.close();
    }
    return 0;
  }

  const edge = createEdge(command.config);
  let ports;
  try {
    ports = await edge.start();
  } catch (err) {
    if (err instanceof PortInUseError) {
      process.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`error: ${(err as Error).message ?? String(err)}\n`);
    return 1;
  }

  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      edge.log.info(`${signal}: stopping`);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    process.stdout.write(`ready ${JSON.stringify({ http: ports.http, mqtt: ports.mqtt })}\n`);
  });
  await edge.stop();
  return 0;
}

main().then(
  (code) => { process.exitCode = code; },
  (err) => {
    process.stderr.write(`error: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
