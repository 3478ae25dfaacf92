import { describe, expect, it } from 'vitest';
import { toPostgresDdl, toPostgresPlaceholders, toPostgresSql } from './postgres-sql.ts';

describe('toPostgresPlaceholders', () => {
  it('numbers ? placeholders and leaves quoted text and comments alone', () => {
    expect(
      toPostgresPlaceholders("select * from \"t?\" where a = ? and b = 'it''s ?' and c in (?, ?) -- why?\n and d = ?"),
    ).toBe("select * from \"t?\" where a = $1 and b = 'it''s ?' and c in ($2, $3) -- why?\n and d = $4");
    expect(toPostgresPlaceholders('select 1')).toBe('select 1');
  });
});

describe('toPostgresSql', () => {
  it('unqualifies the columns of an ON CONFLICT target, which drizzle qualifies with the table', () => {
    expect(
      toPostgresSql('insert into "f" ("a", "b") values (?, ?) on conflict ("f"."a", "f"."b") do update set "b" = ?'),
    ).toBe('insert into "f" ("a", "b") values ($1, $2) on conflict ("a", "b") do update set "b" = $3');
  });
});

describe('toPostgresDdl', () => {
  it('maps the SQLite types the migrations use to their PostgreSQL counterparts', () => {
    expect(
      toPostgresDdl(
        'CREATE TABLE z (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, lat REAL, n INTEGER, b BLOB);',
      ),
    ).toBe(
      'CREATE TABLE z (id BIGSERIAL PRIMARY KEY, name TEXT COLLATE "C" NOT NULL, lat DOUBLE PRECISION, n BIGINT, b BYTEA);\n' +
        "CREATE TRIGGER z_fill_id BEFORE INSERT ON z FOR EACH ROW WHEN (NEW.id IS NULL) EXECUTE FUNCTION smarthome_fill_id('z_id_seq');",
    );
    expect(toPostgresDdl('CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT)')).toBe(
      'CREATE TABLE p (id BIGINT PRIMARY KEY, name TEXT COLLATE "C")',
    );
  });
});
