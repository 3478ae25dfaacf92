/** A tiny leveled logger on stderr; stdout is reserved for the `ready` line and CLI output. */
export interface Logger {
  debug(msg: string, ...rest: unknown[]): void;
  info(msg: string, ...rest: unknown[]): void;
  warn(msg: string, ...rest: unknown[]): void;
  error(msg: string, err?: unknown): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;

export function createLogger(level: LogLevel = 'info', name = 'edge'): Logger {
  const min = LEVELS[level];
  const line = (lvl: LogLevel, msg: string, rest: unknown[]) => {
    if (LEVELS[lvl] < min) return;
    const extra = rest.length ? ' ' + rest.map((r) => (r instanceof Error ? r.message : typeof r === 'string' ? r : JSON.stringify(r))).join(' ') : '';
    process.stderr.write(`${new Date().toISOString()} ${lvl} [${name}] ${msg}${extra}\n`);
  };
  return {
    debug: (msg, ...rest) => line('debug', msg, rest),
    info: (msg, ...rest) => line('info', msg, rest),
    warn: (msg, ...rest) => line('warn', msg, rest),
    error: (msg, err) => line('error', msg, err === undefined ? [] : [err]),
  };
}

export const silentLogger: Logger = createLogger('silent');
