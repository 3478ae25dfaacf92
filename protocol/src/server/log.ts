/**
 * The one logger of the cloud and the edge: one JSON object per line on stderr (stdout carries
 * only the `ready` line and CLI output), so journald, docker and log shippers read both alike:
 * `{"t":ISO time,"level","name","msg",...fields}`; errors add `err`, `stack` and their cause.
 */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, err?: unknown, fields?: Record<string, unknown>): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;
export const LOG_LEVELS = Object.keys(LEVELS) as LogLevel[];

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? { cause: err.cause.message, cause_stack: err.cause.stack } : {};
    return { err: err.message, stack: err.stack, ...cause };
  }
  return err === undefined ? {} : { err: String(err) };
}

export function createLogger(name: string, opts: { level?: LogLevel; silent?: boolean } = {}): Logger {
  const min = LEVELS[opts.silent ? 'silent' : (opts.level ?? 'info')];
  const write = (level: Exclude<LogLevel, 'silent'>, msg: string, fields: Record<string, unknown>) => {
    if (LEVELS[level] < min) return;
    process.stderr.write(JSON.stringify({ t: new Date().toISOString(), level, name, msg, ...fields }) + '\n');
  };
  return {
    debug: (msg, fields = {}) => write('debug', msg, fields),
    info: (msg, fields = {}) => write('info', msg, fields),
    warn: (msg, fields = {}) => write('warn', msg, fields),
    error: (msg, err, fields = {}) => write('error', msg, { ...errorFields(err), ...fields }),
  };
}

export const silentLogger: Logger = createLogger('silent', { silent: true });
