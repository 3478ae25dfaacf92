export * from './state.ts';
export * from './config.ts';
export * from './messages.ts';
export * from './registry.ts';
export * from './user.ts';
export * from './history.ts';
export * from './relay.ts';
