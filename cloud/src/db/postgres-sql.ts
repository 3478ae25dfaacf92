/**
 * The cloud writes SQL once, in the dialect both engines share; these turn the two places
 * where SQLite and PostgreSQL spell it differently into PostgreSQL.
 */

/**
 * SQL as the cloud writes it (and drizzle's SQLite builder emits it) → PostgreSQL: placeholders
 * renumbered, and an ON CONFLICT target's columns unqualified (drizzle writes
 * `on conflict ("t"."c")`, which PostgreSQL's grammar does not accept).
 */
export function toPostgresSql(sql: string): string {
  const numbered = toPostgresPlaceholders(sql);
  if (!/on conflict \("/i.test(numbered)) return numbered;
  return numbered.replace(
    /(on conflict \()([^)]*)\)/gi,
    (_all, head: string, columns: string) => `${head}${columns.replace(/"[^"]*"\./g, '')})`,
  );
}

/** `?` placeholders → `$1, $2, …`; quoted text and comments are left alone. */
export function toPostgresPlaceholders(sql: string): string {
  if (!sql.includes('?')) return sql;
  let out = '';
  let n = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = closingQuote(sql, i, c);
      out += sql.slice(i, end + 1);
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end === -1 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === '?') {
      out += `$${++n}`;
    } else {
      out += c;
    }
  }
  return out;
}

function closingQuote(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      } // doubled quote = escaped
      return i;
    }
    i++;
  }
  return sql.length - 1;
}

/**
 * SQLite numbers a row whose INTEGER PRIMARY KEY is inserted as NULL, and drizzle's SQLite
 * builder writes NULL for every column an insert leaves out; PostgreSQL would refuse it.
 * A trigger (only for rows with a NULL id) gives such rows the next value of the column's
 * sequence. Created before the migrations run.
 */
export const FILL_ID_FUNCTION = `CREATE OR REPLACE FUNCTION smarthome_fill_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.id := nextval(TG_ARGV[0]::regclass);
  RETURN NEW;
END $$`;

/**
 * Migrations are written once, as SQLite DDL in the subset both engines share, and generated
 * for PostgreSQL here: 64-bit integers (ids and epoch milliseconds), sequences for
 * AUTOINCREMENT ids, doubles for REAL, and byte-order text comparison ("C" collation) so that
 * ORDER BY and uniqueness behave as on SQLite.
 */
export function toPostgresDdl(sql: string): string {
  return sql
    .replace(
      /CREATE TABLE (\w+) \(([^;]*?)\bid INTEGER PRIMARY KEY AUTOINCREMENT\b([^;]*);/g,
      (_all, table: string, before: string, after: string) =>
        `CREATE TABLE ${table} (${before}id BIGSERIAL PRIMARY KEY${after};\n` +
        `CREATE TRIGGER ${table}_fill_id BEFORE INSERT ON ${table} FOR EACH ROW WHEN (NEW.id IS NULL) EXECUTE FUNCTION smarthome_fill_id('${table}_id_seq');`,
    )
    .replace(/\bINTEGER PRIMARY KEY AUTOINCREMENT\b/g, () => {
      throw new Error('AUTOINCREMENT is supported for a column named id in CREATE TABLE ... ; only');
    })
    .replace(/\bINTEGER\b/g, 'BIGINT')
    .replace(/\bREAL\b/g, 'DOUBLE PRECISION')
    .replace(/\bBLOB\b/g, 'BYTEA')
    .replace(/\bTEXT\b/g, 'TEXT COLLATE "C"');
}
