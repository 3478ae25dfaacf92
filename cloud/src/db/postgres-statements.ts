import { toPostgresSql } from './postgres-sql.ts';

/** translations kept (the multi-row statements' texts vary with their row count) */
const MAX_CACHED = 1000;
/** a text is prepared under a name from its second run on: one seen once may never come back */
const NAME_FROM_RUN = 2;
/**
 * names one process gives at most (each connection of the pool keeps what it prepared until it
 * closes: the server's memory per connection stays bounded)
 */
const MAX_NAMES = 500;
/** longer texts (multi-row statements, whose row count varies) are not worth a name */
const MAX_NAMED_LENGTH = 4000;
/**
 * `SELECT *` and `RETURNING *`: a prepared statement's result columns are fixed, so once a
 * migration (another replica's, in a rolling upgrade) adds a column, the server refuses it
 */
const ALL_COLUMNS = /\b(select|returning)\s+(distinct\s+)?("?\w+"?\.)?\*/i;

/** SQLSTATEs of a named statement the server no longer has or no longer runs */
const NO_SUCH_STATEMENT = '26000';
const PLAN_CHANGED_RESULT = '0A000';

interface Statement {
  text: string;
  runs: number;
  name: string | undefined;
  /** refused once under its name: always sent unnamed from then on */
  unnamed: boolean;
}

/**
 * The PostgreSQL text of each of the cloud's statements (written in SQLite's dialect), and a
 * name for those that repeat. An unnamed statement is parsed and planned by the server at every
 * run; a named one once per connection: the access checks every app socket repeats every few
 * seconds spent more time in the planner than in their execution. A server that loses the names
 * (a connection pooler in transaction mode) turns naming off for the process.
 */
export class PostgresStatements {
  private readonly cache = new Map<string, Statement>();
  private names = 0;
  private naming = true;

  /** What to send for `sql`: its text, and its name once it has run before. */
  get(sql: string): { text: string; name: string | undefined } {
    let s = this.cache.get(sql);
    if (s === undefined) {
      if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
      const text = toPostgresSql(sql);
      s = { text, runs: 0, name: undefined, unnamed: text.length > MAX_NAMED_LENGTH || ALL_COLUMNS.test(text) };
      this.cache.set(sql, s);
    }
    s.runs += 1;
    if (s.name === undefined && !s.unnamed && this.naming && s.runs >= NAME_FROM_RUN && this.names < MAX_NAMES)
      s.name = `smarthome_${++this.names}`;
    return { text: s.text, name: this.naming && !s.unnamed ? s.name : undefined };
  }

  /**
   * Whether `err`, raised by `sql` sent under a name, means the name cannot serve (the caller
   * then runs it once more unnamed): a statement the server no longer has turns naming off, one
   * whose result changed is sent unnamed from now on.
   */
  refused(sql: string, err: unknown): boolean {
    const code = (err as { code?: string }).code;
    if (code === NO_SUCH_STATEMENT) {
      this.naming = false;
      return true;
    }
    if (code === PLAN_CHANGED_RESULT && /result type/.test((err as Error).message ?? '')) {
      const s = this.cache.get(sql);
      if (s) s.unnamed = true;
      return true;
    }
    return false;
  }
}
