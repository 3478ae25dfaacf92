import { LocalTokenStore } from './auth/tokens.ts';
import { parseCommand, USAGE, UsageError } from './cli.ts';
import { EdgeDatabase } from './db/database.ts';
import { backupDatabase, restoreDatabase } from './db/backup.ts';
import { createEdge } from './edge.ts';
import { runMqttOwnerCommand } from './mqtt/owner-cli.ts';
import { createAccountCommand } from './accounts/cli.ts';
import { PortInUseError } from './errors.ts';
import { collectAfterBursts } from './burst-gc.ts';
import { collectStartupGarbage } from './startup-gc.ts';

/** Longest a stop may take (its steps are bounded well below this) before the process commits what it can and exits 1. */
const STOP_LIMIT_MS = 10_000;

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
    return runMqttOwnerCommand(command, {
      stdout: (t) => process.stdout.write(t),
      stderr: (t) => process.stderr.write(t),
    });
  }

  if (command.kind === 'account-create')
    return createAccountCommand(command.dataDir, command.username, command.role, process.stdin);
  if (command.kind === 'token-create') {
    const database = new EdgeDatabase(command.dataDir);
    database.open();
    try {
      const { token } = new LocalTokenStore(database).create(command.name);
      process.stdout.write(token + '\n');
      process.stderr.write(
        `created local API token "${command.name}" (shown once; stored hashed in ${database.file})\n`,
      );
    } finally {
      database.close();
    }
    return 0;
  }

  const edge = createEdge(command.config);
  // From before start on, the first SIGTERM/SIGINT stops the edge; later ones (pnpm forwards one,
  // a terminal's Ctrl-C reaches every process of the group, operators press twice) are logged and
  // ignored: pending writes are committed before the process may end, and STOP_LIMIT_MS bounds it.
  let stopSignal: NodeJS.Signals | null = null;
  let requestStop = () => {};
  const stopRequested = new Promise<void>((resolve) => {
    requestStop = resolve;
  });
  let limit: NodeJS.Timeout | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopSignal) {
      edge.log.warn(
        `${signal} while stopping: ignored (pending writes are committed first; the edge exits within ${STOP_LIMIT_MS / 1000} s)`,
      );
      return;
    }
    stopSignal = signal;
    edge.log.info(`${signal}: stopping`);
    // Every stop step is bounded (network peers get 1 s); this is the bound of last resort (a start
    // still running counts too), and it commits first as well.
    limit = setTimeout(() => {
      try {
        edge.commit();
        edge.log.error(`stop did not finish within ${STOP_LIMIT_MS / 1000} s: pending writes committed, exiting`);
      } catch (err) {
        edge.log.error(
          `stop did not finish within ${STOP_LIMIT_MS / 1000} s, and pending writes could not be committed: ${(err as Error)?.message ?? String(err)}`,
          err,
        );
      }
      process.exit(1);
    }, STOP_LIMIT_MS);
    requestStop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  try {
    return await run(edge, stopRequested, () => stopSignal !== null);
  } finally {
    clearTimeout(limit);
  }
}

/** Starts the edge, prints the ready line (unless a signal came first), waits for the signal, stops: the exit code. */
async function run(
  edge: ReturnType<typeof createEdge>,
  stopRequested: Promise<void>,
  signalled: () => boolean,
): Promise<number> {
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
  if (!signalled()) process.stdout.write(`ready ${JSON.stringify({ http: ports.http, mqtt: ports.mqtt })}\n`);
  // after the ready line, so that the ~0.1 s this takes at 10,000 entities does not delay it
  setImmediate(collectStartupGarbage);
  const stopCollecting = collectAfterBursts(edge.broker);
  await stopRequested;
  stopCollecting();
  try {
    await edge.stop();
  } catch (err) {
    edge.log.error(`stopped with data lost: ${(err as Error)?.message ?? String(err)}`, err);
    return 1;
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`error: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
