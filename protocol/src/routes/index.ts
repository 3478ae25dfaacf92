export * from './core.ts';
export * from './zones.ts';
export * from './dashboards.ts';
export * from './transfers.ts';
export * from './voip.ts';
export * from './orgs.ts';
export * from './edges.ts';
export * from './billing.ts';
