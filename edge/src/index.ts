/** Public entry of @smarthome/edge: build a whole edge in-process. */
export { createEdge, type Edge, type EdgeConfig, type EdgePorts, type EdgeSnapshot } from './edge.ts';
export { EventBus, type EdgeEventMap, type EdgeEventType, type StateChangedEvent } from './bus.ts';
export { createLogger, silentLogger, type Logger, type LogLevel } from './log.ts';
export { PortInUseError } from './errors.ts';
export type { PlatformServices } from './services/services.ts';
export { TemplateEngine, TemplateError } from './templates/template.ts';
