import { parseArgs } from 'node:util';
import { LOG_LEVELS, type LogLevel } from '@smarthome/protocol/server';
import type { EdgeConfig } from './edge.ts';
import { parseCallUrlAllowList } from './automation/call-url.ts';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

function port(value: string | undefined, fallback: number, what: string): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new UsageError(`${what} must be a port number (0-65535), got "${value}"`);
  return Number(value);
}

/** Longest write-behind window accepted: beyond a minute, a crash would lose too much to be a setting. */
export const MAX_FLUSH_MS = 60_000;

function flushMs(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) > MAX_FLUSH_MS) {
    throw new UsageError(`${flag} must be whole milliseconds in 0-${MAX_FLUSH_MS}, got "${value}"`);
  }
  return Number(value);
}

export type Command =
  | { kind: 'run'; config: EdgeConfig }
  | { kind: 'token-create'; dataDir: string; name: string }
  | { kind: 'account-create'; dataDir: string; username: string; role: 'owner' | 'user' }
  | { kind: 'backup'; dataDir: string; out: string }
  | { kind: 'restore'; dataDir: string; from: string }
  | { kind: 'mqtt-owner'; dataDir: string; port: number; action: MqttOwnerAction }
  | { kind: 'help' };

/** What `pnpm edge mqtt-owner …` asks the running edge (`target`: a device id or a discovery topic). */
export type MqttOwnerAction =
  | { kind: 'list' }
  | { kind: 'set'; target: { device_id: number } | { discovery_topic: string }; username: string | null };

export const USAGE = `usage:
  pnpm edge [--port P] [--mqtt-port M] [--data-dir D] [--cloud-url URL --token T] [--cloud-replica]
            [--call-url-allow LIST] [--state-flush-ms MS] [--retained-flush-ms MS]
  pnpm edge token create [--name N] [--data-dir D]
  pnpm edge account create <username> [--role owner|user] [--data-dir D]
                a local account of the portal (password read from stdin; the first is the owner)
  pnpm edge backup --out FILE [--data-dir D]      online copy of the database (edge may run)
  pnpm edge restore --from FILE [--data-dir D]    replace the database (edge stopped)
  pnpm edge mqtt-owner list [--port P] [--data-dir D]
  pnpm edge mqtt-owner set <device-id|discovery-topic> <username> [--port P] [--data-dir D]
  pnpm edge mqtt-owner release <device-id|discovery-topic> [--port P] [--data-dir D]
                who owns MQTT discovery configs, and giving them to another MQTT user (or
                releasing them); asks the edge running on 127.0.0.1:P with a one-off token

  --port        HTTP port of the local API (EDGE_PORT, default 8123; 0 = any free port)
  --mqtt-port   MQTT broker port (MQTT_PORT, default 1883; 0 = any free port)
  --data-dir    where the SQLite database lives (DATA_DIR, default ./data/edge)
  --cloud-url, --token, --cloud-replica  pairing with a cloud (CLOUD_URL, EDGE_TOKEN)
  --history-days  days of state history and logbook the recorder keeps (HISTORY_DAYS,
                  default 10; purged nightly at 04:12 local time; 0 = recorder off)
  --call-url-allow  comma-separated IPs, CIDRs and host names a cloud replica's call_url may
                    reach although they are not public (CALL_URL_ALLOW; default none)
  --state-flush-ms     longest time a state received over MQTT waits before it is committed
                       to the database (STATE_FLUSH_MS, default 250; 0-60000): what a kill -9
                       or a power cut can lose
  --retained-flush-ms  the same for retained MQTT messages (RETAINED_FLUSH_MS, default 1000; 0-60000)`;

/** Flags win over environment variables. */
export function parseCommand(argv: string[], env: NodeJS.ProcessEnv): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        port: { type: 'string' },
        'mqtt-port': { type: 'string' },
        'data-dir': { type: 'string' },
        'cloud-url': { type: 'string' },
        token: { type: 'string' },
        'cloud-replica': { type: 'boolean' },
        'call-url-allow': { type: 'string' },
        'history-days': { type: 'string' },
        name: { type: 'string' },
        role: { type: 'string' },
        out: { type: 'string' },
        from: { type: 'string' },
        'log-level': { type: 'string' },
        'state-flush-ms': { type: 'string' },
        'retained-flush-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  const dataDir = values['data-dir'] ?? (env.DATA_DIR || './data/edge');
  if (positionals.length > 0) {
    if (positionals[0] === 'token' && positionals[1] === 'create' && positionals.length === 2) {
      return { kind: 'token-create', dataDir, name: values.name ?? 'cli' };
    }
    if (positionals[0] === 'account' && positionals[1] === 'create') {
      if (positionals.length !== 3) throw new UsageError('account create needs <username>');
      const role = values.role ?? 'user';
      if (role !== 'owner' && role !== 'user') throw new UsageError(`--role must be owner or user, got "${role}"`);
      return { kind: 'account-create', dataDir, username: positionals[2], role };
    }
    if (positionals[0] === 'backup' && positionals.length === 1) {
      if (!values.out) throw new UsageError('backup needs --out FILE');
      return { kind: 'backup', dataDir, out: values.out };
    }
    if (positionals[0] === 'restore' && positionals.length === 1) {
      if (!values.from) throw new UsageError('restore needs --from FILE');
      return { kind: 'restore', dataDir, from: values.from };
    }
    if (positionals[0] === 'mqtt-owner') {
      const runningPort = port(values.port ?? env.EDGE_PORT, 8123, '--port');
      if (runningPort === 0) throw new UsageError("mqtt-owner needs the running edge's --port (not 0)");
      return { kind: 'mqtt-owner', dataDir, port: runningPort, action: mqttOwnerAction(positionals.slice(1)) };
    }
    throw new UsageError(`unknown command: ${positionals.join(' ')}`);
  }
  const logLevel = values['log-level'] ?? env.LOG_LEVEL;
  if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel as LogLevel))
    throw new UsageError(`unknown log level ${logLevel}`);
  let callUrlAllow: string[];
  try {
    callUrlAllow = parseCallUrlAllowList(values['call-url-allow'] ?? env.CALL_URL_ALLOW ?? '');
  } catch (err) {
    throw new UsageError(`--call-url-allow: ${(err as Error).message}`);
  }
  const historyDaysText = values['history-days'] ?? env.HISTORY_DAYS;
  let historyDays = 10;
  if (historyDaysText !== undefined && historyDaysText !== '') {
    if (!/^\d{1,5}$/.test(historyDaysText))
      throw new UsageError(
        `--history-days must be a whole number of days (0 = recorder off), got "${historyDaysText}"`,
      );
    historyDays = Number(historyDaysText);
  }
  return {
    kind: 'run',
    config: {
      port: port(values.port ?? env.EDGE_PORT, 8123, '--port'),
      mqttPort: port(values['mqtt-port'] ?? env.MQTT_PORT, 1883, '--mqtt-port'),
      dataDir,
      cloudUrl: values['cloud-url'] ?? (env.CLOUD_URL || undefined),
      token: values.token ?? (env.EDGE_TOKEN || undefined),
      cloudReplica: values['cloud-replica'] ?? false,
      callUrlAllow,
      historyDays,
      logLevel: logLevel as EdgeConfig['logLevel'],
      stateFlushMs: flushMs(values['state-flush-ms'] ?? (env.STATE_FLUSH_MS || undefined), 250, '--state-flush-ms'),
      retainedFlushMs: flushMs(
        values['retained-flush-ms'] ?? (env.RETAINED_FLUSH_MS || undefined),
        1000,
        '--retained-flush-ms',
      ),
    },
  };
}

function mqttOwnerAction(args: string[]): MqttOwnerAction {
  const target = (t: string) => (/^[0-9]{1,15}$/.test(t) ? { device_id: Number(t) } : { discovery_topic: t });
  if (args[0] === 'list' && args.length === 1) return { kind: 'list' };
  if (args[0] === 'set') {
    if (args.length !== 3) throw new UsageError('mqtt-owner set needs <device-id|discovery-topic> <username>');
    return { kind: 'set', target: target(args[1]), username: args[2] };
  }
  if (args[0] === 'release') {
    if (args.length !== 2) throw new UsageError('mqtt-owner release needs <device-id|discovery-topic>');
    return { kind: 'set', target: target(args[1]), username: null };
  }
  if (args.length === 0) throw new UsageError('mqtt-owner needs list, set or release');
  throw new UsageError(`unknown command: mqtt-owner ${args.join(' ')} (list, set or release)`);
}
