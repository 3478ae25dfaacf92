/** Structured one-line JSON logs on stderr (stdout carries only the ready line). */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, err?: unknown, fields?: Record<string, unknown>): void;
}

function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? { cause: err.cause.message, cause_stack: err.cause.stack } : {};
    return { err: err.message, stack: err.stack, ...cause };
  }
  return err === undefined ? {} : { err: String(err) };
}

export function createLogger(name: string, opts: { silent?: boolean } = {}): Logger {
  const write = (level: string, msg: string, fields: Record<string, unknown>) => {
    if (opts.silent) return;
    process.stderr.write(JSON.stringify({ t: new Date().toISOString(), level, name, msg, ...fields }) + '\n');
  };
  return {
    info: (msg, fields = {}) => write('info', msg, fields),
    warn: (msg, fields = {}) => write('warn', msg, fields),
    error: (msg, err, fields = {}) => write('error', msg, { ...errorFields(err), ...fields }),
  };
}
