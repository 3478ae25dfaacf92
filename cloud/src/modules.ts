import type { Migration } from './db/database.ts';
import type { RouteModule } from './context.ts';
import { authMigrations } from './auth/tables.ts';
import { orgMigrations } from './orgs/tables.ts';
import { shareMigrations } from './authz/shares-table.ts';
import { mountAuthRoutes } from './auth/routes.ts';

/** Every capability's migrations, in the order they must apply (append only). */
export const migrations: Migration[] = [
  ...authMigrations,
  ...orgMigrations,
  ...shareMigrations,
];

/** Every capability's routes; one line per module. */
export const routeModules: RouteModule[] = [
  mountAuthRoutes,
];
