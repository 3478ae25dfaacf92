export * from './errors.ts';
export * from './body.ts';
export * from './json.ts';
export * from './router.ts';
export * from './app.ts';
export * from './log.ts';
export * from './upgrade.ts';
export * from './lifecycle.ts';
