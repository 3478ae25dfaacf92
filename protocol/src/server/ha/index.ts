export * from './backend.ts';
export * from './entities.ts';
export * from './session.ts';
export * from './command.ts';
export { coreCommands, newContextId } from './commands.ts';
export { mountHaRest } from './rest.ts';
export { contextIdFor, toHaState } from './states.ts';
export { API_TOKEN_USER } from './client-commands.ts';
