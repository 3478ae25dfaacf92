/** A listening port is taken; main.ts turns it into one clear line on stderr. */
export class PortInUseError extends Error {
  readonly what: string;
  readonly port: number;
  readonly flag: string;
  constructor(what: string, port: number, flag: string, options?: { cause?: unknown }) {
    super(`${what} port ${port} is already in use (try ${flag} 0)`, options);
    this.name = 'PortInUseError';
    this.what = what;
    this.port = port;
    this.flag = flag;
  }
}

export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}

/** Something the input names does not exist (→ 404). */
export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

/** The input is well-formed but cannot be used, e.g. it names an unknown MQTT user (→ 400). */
export class InvalidInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidInputError';
  }
}

/** Listens and resolves with the bound port; EADDRINUSE becomes PortInUseError. */
export function listen(
  server: {
    listen(port: number, host: string | undefined, cb: () => void): unknown;
    once(e: 'error', l: (err: NodeJS.ErrnoException) => void): unknown;
    off(e: 'error', l: (err: NodeJS.ErrnoException) => void): unknown;
    address(): unknown;
  },
  port: number,
  host: string | undefined,
  what: string,
  flag: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(new PortInUseError(what, port, flag, { cause: err }));
      else if (err.code === 'EACCES')
        reject(new Error(`${what} port ${port} needs more privileges (try ${flag} 0)`, { cause: err }));
      else reject(err);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr !== null && 'port' in addr ? (addr as { port: number }).port : port);
    });
  });
}

/** stop() could not commit every pending write-behind row: main.ts reports it and exits non-zero. */
export class UncommittedWritesError extends Error {
  readonly states: number;
  readonly retained: number;
  constructor(states: number, retained: number, cause: unknown) {
    const what = [
      states ? `${states} state${states === 1 ? '' : 's'}` : '',
      retained ? `${retained} retained MQTT message${retained === 1 ? '' : 's'}` : '',
    ]
      .filter(Boolean)
      .join(' and ');
    super(`could not commit ${what} to the database before stopping: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.name = 'UncommittedWritesError';
    this.states = states;
    this.retained = retained;
  }
}
