import { createLogger as create, type Logger, type LogLevel } from '@smarthome/protocol/server';

export { silentLogger, type Logger, type LogLevel } from '@smarthome/protocol/server';

/** The edge's logger: the shared JSON-lines logger named "edge" at the given level. */
export function createLogger(level: LogLevel = 'info', name = 'edge'): Logger {
  return create(name, { level });
}
