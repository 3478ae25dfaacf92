import { HttpError } from '@smarthome/protocol/server';

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

/**
 * What an edge error means, and the status the one onError (protocol's installErrorHandling)
 * answers for it. The kinds are this table's keys, so no kind is without its status.
 */
const STATUS_OF_KIND = {
  /** well-formed input that cannot be used: bad service data, an unknown MQTT user, an invalid automation */
  invalid_input: 400,
  /** something the input names does not exist */
  not_found: 404,
  /** it exists already */
  conflict: 409,
} as const satisfies Record<string, 400 | 404 | 409>;
export type EdgeErrorKind = keyof typeof STATUS_OF_KIND;

/**
 * The edge's one error family. An EdgeError is an HttpError, so a route lets it through and the
 * one onError answers its kind's status with the spec's body: no per-route catch. `kind` is for
 * callers that are not HTTP (the HA WebSocket API, the CLI). Anything thrown that is not in the
 * family answers 500 `{"error":"internal_error"}` and is logged with its stack.
 */
export class EdgeError extends HttpError {
  readonly kind: EdgeErrorKind;
  constructor(kind: EdgeErrorKind, message: string, options: { cause?: unknown } = {}) {
    super(STATUS_OF_KIND[kind], message, options);
    this.name = 'EdgeError';
    this.kind = kind;
  }
}

/** It exists already (→ 409). */
export class ConflictError extends EdgeError {
  constructor(message: string) {
    super('conflict', message);
    this.name = 'ConflictError';
  }
}

/** Something the input names does not exist (→ 404). */
export class NotFoundError extends EdgeError {
  constructor(message: string) {
    super('not_found', message);
    this.name = 'NotFoundError';
  }
}

/** The input is well-formed but cannot be used, e.g. it names an unknown MQTT user (→ 400). */
export class InvalidInputError extends EdgeError {
  constructor(message: string) {
    super('invalid_input', message);
    this.name = 'InvalidInputError';
  }
}

/** Bad service data (e.g. brightness 300), from the MQTT platform or an integration (→ 400). */
export class ServiceError extends EdgeError {
  constructor(message: string) {
    super('invalid_input', message);
    this.name = 'ServiceError';
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
