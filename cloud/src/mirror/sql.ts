/** The mirror's portable SQL (SQLite and PostgreSQL) and the columns its rows are written in. */

export const DEVICE_COLUMNS = [
  'edge_id',
  'id',
  'name',
  'manufacturer',
  'model',
  'sw_version',
  'identifiers',
  'config_entry_id',
  'user_id',
  'via_device_id',
  'area_id',
] as const;
export const ENTITY_COLUMNS = [
  'edge_id',
  'entity_id',
  'id',
  'name',
  'domain',
  'platform',
  'unique_id',
  'config_entry_id',
  'device_registry_id',
  'registered',
  'state',
  'attributes',
  'last_changed',
  'last_updated',
  'disabled_by',
  'settings',
] as const;
export const ENTRY_COLUMNS = ['edge_id', 'id', 'domain', 'title', 'source', 'state', 'created_at'] as const;
export const AUTOMATION_COLUMNS = ['edge_id', 'id', 'alias', 'enabled', 'mode', 'webhook_id'] as const;

export const SQL = {
  upsertDevice: `INSERT INTO mirror_devices (${DEVICE_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (edge_id, id) DO UPDATE SET name = excluded.name, manufacturer = excluded.manufacturer, model = excluded.model,
      sw_version = excluded.sw_version, identifiers = excluded.identifiers, config_entry_id = excluded.config_entry_id, user_id = excluded.user_id,
      via_device_id = excluded.via_device_id, area_id = excluded.area_id`,
  /** a record keeps the entity's state */
  upsertEntity: `INSERT INTO mirror_entities (edge_id, entity_id, id, name, domain, platform, unique_id, config_entry_id, device_registry_id, registered, disabled_by, settings)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
    ON CONFLICT (edge_id, entity_id) DO UPDATE SET id = excluded.id, name = excluded.name, domain = excluded.domain, platform = excluded.platform,
      unique_id = excluded.unique_id, config_entry_id = excluded.config_entry_id, device_registry_id = excluded.device_registry_id, registered = 1,
      disabled_by = excluded.disabled_by, settings = excluded.settings`,
  /** a disabled entity has no state (as on the edge); enabling it brings the next state from the edge */
  dropDisabledState: `UPDATE mirror_entities SET state = NULL, attributes = '{}', last_changed = NULL, last_updated = NULL
    WHERE edge_id = ? AND entity_id = ? AND disabled_by IS NOT NULL`,
  /** a renamed entity (same registry id, new entity_id) leaves no stale row behind */
  dropRenamed: 'DELETE FROM mirror_entities WHERE edge_id = ? AND id = ? AND entity_id <> ?',
  /** a state keeps the entity's record; for an unknown entity it creates an unregistered row */
  upsertState: `INSERT INTO mirror_entities (edge_id, entity_id, name, domain, platform, registered, state, attributes, last_changed, last_updated)
    VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
    ON CONFLICT (edge_id, entity_id) DO UPDATE SET state = excluded.state, attributes = excluded.attributes,
      last_changed = excluded.last_changed, last_updated = excluded.last_updated`,
  upsertEntry: `INSERT INTO mirror_config_entries (${ENTRY_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (edge_id, id) DO UPDATE SET domain = excluded.domain, title = excluded.title, source = excluded.source,
      state = excluded.state, created_at = excluded.created_at`,
  upsertAutomation: `INSERT INTO mirror_automations (${AUTOMATION_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (edge_id, id) DO UPDATE SET alias = excluded.alias, enabled = excluded.enabled, mode = excluded.mode, webhook_id = excluded.webhook_id`,
  upsertArea: `INSERT INTO mirror_areas (edge_id, area_id, name) VALUES (?, ?, ?)
    ON CONFLICT (edge_id, area_id) DO UPDATE SET name = excluded.name`,
  removeDevice: 'DELETE FROM mirror_devices WHERE edge_id = ? AND id = ?',
  removeEntity: 'DELETE FROM mirror_entities WHERE edge_id = ? AND entity_id = ?',
  removeEntry: 'DELETE FROM mirror_config_entries WHERE edge_id = ? AND id = ?',
  removeAutomation: 'DELETE FROM mirror_automations WHERE edge_id = ? AND id = ?',
  setSeq: `INSERT INTO mirror_sync (edge_id, seq, snapshot_at, updated_at, version) VALUES (?, ?, ?, ?, 1)
    ON CONFLICT (edge_id) DO UPDATE SET seq = excluded.seq, snapshot_at = COALESCE(excluded.snapshot_at, mirror_sync.snapshot_at),
      updated_at = excluded.updated_at, version = mirror_sync.version + 1`,
  /** a write without a sequence (the cloud's own, or a cleared mirror) still changes the version */
  bumpVersion: `INSERT INTO mirror_sync (edge_id, seq, snapshot_at, updated_at, version) VALUES (?, NULL, NULL, ?, 1)
    ON CONFLICT (edge_id) DO UPDATE SET updated_at = excluded.updated_at, version = mirror_sync.version + 1`,
  clearSync:
    'UPDATE mirror_sync SET seq = NULL, snapshot_at = NULL, updated_at = ?, version = version + 1 WHERE edge_id = ?',
  getSeq: 'SELECT seq FROM mirror_sync WHERE edge_id = ?',
} as const;
