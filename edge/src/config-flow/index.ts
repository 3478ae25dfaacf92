export * from './ports.ts';
export * from './types.ts';
export * from './schema.ts';
export * from './flows.ts';
export * from './entries.ts';
export * from './component.ts';
export * from './routes.ts';
export * from './memory-ports.ts';
