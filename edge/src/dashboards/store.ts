import type { z } from 'zod';
import type { Dashboard, PutDashboardBody } from '@smarthome/protocol/dashboards';
import type { EdgeDatabase } from '../db/database.ts';
import { ConflictError, NotFoundError } from '../errors.ts';

/** Who owns an edge dashboard: the home, i.e. everyone who may use the local API. */
export const HOME_OWNER = 'home';

interface Row {
  id: number;
  name: string;
  type: string;
  title: string;
  icon: string;
  url: string | null;
  config: string;
  user_id: string;
  created_at: string;
  updated_at: string;
}

const toDashboard = (r: Row): Dashboard => ({
  id: r.id,
  name: r.name,
  type: r.type,
  title: r.title,
  icon: r.icon,
  url: r.url,
  config: JSON.parse(r.config) as Dashboard['config'],
  user_id: r.user_id,
  org_id: null,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** The edge's dashboards in its SQLite file (table ui_dashboards); defaults as on the cloud. */
export class DashboardStore {
  private readonly database: EdgeDatabase;
  constructor(database: EdgeDatabase) {
    this.database = database;
  }

  list(): Dashboard[] {
    return (this.database.sqlite.prepare('SELECT * FROM ui_dashboards ORDER BY id').all() as Row[]).map(toDashboard);
  }

  /** With id: update that one (404 if none). Without: create or replace the dashboard of that name. */
  put(body: z.output<typeof PutDashboardBody>): Dashboard {
    const sqlite = this.database.sqlite;
    const now = new Date().toISOString();
    const write = sqlite.transaction((): Row => {
      const existing = (
        body.id !== undefined
          ? sqlite.prepare('SELECT * FROM ui_dashboards WHERE id = ?').get(body.id)
          : sqlite.prepare('SELECT * FROM ui_dashboards WHERE name = ?').get(body.name)
      ) as Row | undefined;
      if (body.id !== undefined && !existing) throw new NotFoundError('dashboard not found');
      const clash = sqlite.prepare('SELECT id FROM ui_dashboards WHERE name = ?').get(body.name) as
        { id: number } | undefined;
      if (existing && clash && clash.id !== existing.id)
        throw new ConflictError(`a dashboard named ${body.name} already exists`);
      const fields = {
        name: body.name,
        type: body.type ?? existing?.type ?? 'dashboard',
        title: body.title ?? existing?.title ?? body.name,
        icon: body.icon ?? existing?.icon ?? 'mdi:view-dashboard',
        url: body.url !== undefined ? body.url : (existing?.url ?? null),
        config: JSON.stringify(body.config),
      };
      if (existing)
        return sqlite
          .prepare(
            'UPDATE ui_dashboards SET name = @name, type = @type, title = @title, icon = @icon, url = @url, config = @config, updated_at = @now WHERE id = @id RETURNING *',
          )
          .get({ ...fields, now, id: existing.id }) as Row;
      return sqlite
        .prepare(
          'INSERT INTO ui_dashboards (name, type, title, icon, url, config, user_id, created_at, updated_at) VALUES (@name, @type, @title, @icon, @url, @config, @owner, @now, @now) RETURNING *',
        )
        .get({ ...fields, owner: HOME_OWNER, now }) as Row;
    });
    return toDashboard(write());
  }
}
