import type { Database, Statement } from 'better-sqlite3';

/**
 * Where an attribute set's text is (since recorder_states.shared, migration 13): attributes_id > 0 names a row of
 * recorder_attributes (sets written before, and sets the purge moved out of a deleted row);
 * attributes_id < 0 names the recorder_states row that first carried the set (state_id = -id),
 * which keeps the text in its `shared` column. Both are rowid searches.
 */
export const STORED_SET_SQL = 'SELECT shared FROM recorder_attributes WHERE attributes_id = ?';
export const CARRIED_SET_SQL = 'SELECT shared FROM recorder_states WHERE state_id = ?';

/** The text of a set by its attributes_id (undefined: none, e.g. purged). Statements prepared on first use. */
export function attributeTextReader(sqlite: () => Database): (id: number) => string | undefined {
  let stored: Statement | null = null;
  let carried: Statement | null = null;
  return (id) => {
    if (id > 0) {
      stored ??= sqlite().prepare(STORED_SET_SQL).pluck();
      return stored.get(id) as string | undefined;
    }
    carried ??= sqlite().prepare(CARRIED_SET_SQL).pluck();
    return (carried.get(-id) as string | null | undefined) ?? undefined;
  };
}

/** Every stored set as [id, metadata_id, shared] (both places; not the sets inside blocks), stored ones first: for tests and inspection. */
export const ALL_SETS_SQL = `SELECT id, metadata_id, shared FROM (
    SELECT attributes_id AS id, metadata_id, shared FROM recorder_attributes
    UNION ALL SELECT -state_id, metadata_id, shared FROM recorder_states WHERE shared IS NOT NULL AND attributes_id <> 0)
  ORDER BY id < 0, abs(id)`;
