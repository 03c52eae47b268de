// The one place that opens SQLite: pragmas in the right order, schema v1, read-only opens that leave no trace.
import fs from "node:fs";
import Database from "better-sqlite3";
import {
  DummyDriver,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type Compilable,
} from "kysely";
import { DatabaseError, NotFoundError, SchemaFormatError, SchemaVersionError, describeError } from "../core/errors.js";
import { toolVersion } from "../core/version.js";
import { AGENT_SCHEMA_ADDITIVE_OBJECTS, AGENT_SCHEMA_ADDITIVE_SQL, AGENT_SCHEMA_SQL, GLOBAL_SCHEMA_ADDITIVE_OBJECTS, GLOBAL_SCHEMA_ADDITIVE_SQL, GLOBAL_SCHEMA_SQL, SCHEMA_VERSION } from "./generated/ddl.js";
import { defaultBusyTimeoutMs } from "./busy-timeout.js";
import { ensurePrivateDir, ensurePrivateDirBelow, ensurePrivateFile, lstatOrNull, symlinkOnPath, UnsafePathError } from "./private-fs.js";
import { openReadOnlyHandle, unwritableReason, type ReadOnlyHandle } from "./read-only-open.js";
import { databasePathProblem } from "./owned-path.js";
import { classifyFormat, detectFormat, isOurFormat, type DbFormat } from "./db-format.js";
import path from "node:path";

export type DbRole = "global" | "agent";
export type OpenMode = "read" | "write";

export { BUSY_TIMEOUT_MS } from "./busy-timeout.js";

export interface OpenDatabaseOptions {
  path: string;
  role: DbRole;
  agentId?: string | undefined;
  /** `read` never creates or modifies anything; `write` takes WAL and may apply the schema. */
  mode: OpenMode;
  /** With `write`: create the file (0600, parents 0700) and apply schema v1 when missing. */
  create?: boolean;
  /** Overrides BUSY_TIMEOUT_MS (tests of lock contention). */
  busyTimeoutMs?: number;
  /**
   * The tree the database belongs to (the state dir). A database is only ever created on a path that
   * reaches it from here without a symlink; missing directories are made 0700 one by one.
   */
  root?: string;
  /**
   * `ours` (default): only the format this tool's typed rows describe (design-document v1, or a new file) is
   * opened; another format is refused before any statement touches it. `any`: every SQLite format opens (backup,
   * probes, leases), the caller looks at `db.format` before it interprets a row; nothing is ever applied to it.
   */
  formats?: "ours" | "any";
}

type Row = Record<string, unknown>;

/** A typed handle: Kysely builds the SQL, better-sqlite3 runs it synchronously (real transactions, no await gaps). */
export class StateDatabase<DB> {
  readonly path: string;
  readonly role: DbRole;
  readonly agentId: string | undefined;
  readonly mode: OpenMode;
  readonly handle: Database.Database;
  /** Query builder only; execute with `all`/`first`/`run`. */
  readonly q: Kysely<DB>;
  readonly created: boolean;
  /** The on-disk format found at open (after the schema was applied, for a new file). */
  readonly format: DbFormat;
  private readonly statements = new Map<string, Database.Statement>();
  private closed = false;
  /** Set when a read open had to go through a temporary copy (read-only location): removes it on close. */
  cleanup: (() => void) | undefined;

  constructor(handle: Database.Database, options: OpenDatabaseOptions, created: boolean, format: DbFormat) {
    this.handle = handle;
    this.format = format;
    this.path = options.path;
    this.role = options.role;
    this.agentId = options.agentId;
    this.mode = options.mode;
    this.created = created;
    this.q = createQueryBuilder<DB>();
  }

  /** A cached prepared statement; raw SQL is for pragmas, DDL and measured hot paths only. */
  prepare(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.handle.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** A statement of its own (not cached): for one that binds a very large value once with bind(); freed when dropped. */
  prepareUncached(sql: string): Database.Statement {
    return this.handle.prepare(sql);
  }

  all<O>(query: Compilable<O>): O[] {
    const compiled = query.compile();
    return this.prepare(compiled.sql).all(...(compiled.parameters as unknown[])) as O[];
  }

  first<O>(query: Compilable<O>): O | undefined {
    const compiled = query.compile();
    return this.prepare(compiled.sql).get(...(compiled.parameters as unknown[])) as O | undefined;
  }

  run(query: Compilable<unknown>): Database.RunResult {
    const compiled = query.compile();
    return this.prepare(compiled.sql).run(...(compiled.parameters as unknown[]));
  }

  /** Streams rows one at a time (bounded memory); the connection is busy until the iterator ends or is returned. */
  iterate<O>(query: Compilable<O>): IterableIterator<O> {
    const compiled = query.compile();
    return this.prepare(compiled.sql).iterate(...(compiled.parameters as unknown[])) as IterableIterator<O>;
  }

  /**
   * Opens a deferred read transaction so several queries (or a long iteration) see one snapshot;
   * call `end()` when done. Inside an existing transaction it is a no-op.
   */
  readSnapshot(): { end(): void } {
    if (this.handle.inTransaction) return { end() {} };
    this.prepare("BEGIN DEFERRED").run();
    return {
      end: () => {
        if (this.handle.open && this.handle.inTransaction) this.prepare("COMMIT").run();
      },
    };
  }

  /** Runs `fn` inside BEGIN IMMEDIATE: the write lock is taken up front, so no deadlock upgrade later. */
  immediate<T>(fn: () => T): T {
    return this.handle.transaction(fn).immediate();
  }

  /**
   * Runs `fn` with CHECK constraints not evaluated, for writes whose values the caller produced valid by
   * construction. Why: `CHECK (json_valid(x))` builds a JSONB copy of the value with doubling growth, ~3x a
   * 50 MB entry in native memory. The constraint is still verified by every quick_check/integrity_check
   * (doctor after --fix, backup verify). Statements prepared under the other setting re-prepare by themselves.
   */
  withoutCheckConstraints<T>(fn: () => T): T {
    this.handle.pragma("ignore_check_constraints = ON");
    try {
      return fn();
    } finally {
      this.handle.pragma("ignore_check_constraints = OFF");
    }
  }

  /**
   * Attaches another openclaw-state database file under `schema` so one transaction can span both files
   * (the migration commits imported rows and their ledger row together). The file must exist with our schema.
   */
  attach(file: string, schema: string, role: DbRole = "global"): void {
    if (!/^[a-z][a-z0-9_]*$/.test(schema) || schema === "main" || schema === "temp") {
      throw new DatabaseError(`Invalid schema name ${JSON.stringify(schema)} for ATTACH.`, { path: file });
    }
    if (!fs.existsSync(file)) throw new NotFoundError(`Database ${file} does not exist; run \`openclaw-state doctor --fix\` to create it.`, { path: file });
    this.handle.prepare(`ATTACH DATABASE ? AS ${schema}`).run(file);
    // synchronous is per schema and an attached file starts at FULL (an fsync per commit): match openDatabase.
    this.handle.pragma(`${schema}.synchronous = NORMAL`);
    const format = detectAttached(this.handle, schema, role);
    if (!isOurFormat(format)) {
      this.handle.prepare(`DETACH DATABASE ${schema}`).run();
      throw new SchemaVersionError(`Database ${file} was written by ${format.writtenBy}, not in this tool's format v${SCHEMA_VERSION}; it was not modified.`, { path: file, writtenBy: format.writtenBy });
    }
  }

  detach(schema: string): void {
    if (!this.handle.open) return;
    const attached = (this.handle.pragma("database_list") as Array<{ name: string }>).some((d) => d.name === schema);
    if (attached) this.handle.prepare(`DETACH DATABASE ${schema}`).run();
  }

  userVersion(): number {
    return this.handle.pragma("user_version", { simple: true }) as number;
  }

  tableNames(): string[] {
    const rows = this.handle
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .all() as Array<{ name: string }>;
    return rows.map((r) => r.name);
  }

  /** Row count per table; table names come from sqlite_master, never from input. */
  rowCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const name of this.tableNames()) {
      const row = this.handle.prepare(`SELECT count(*) AS n FROM "${name.replace(/"/g, '""')}"`).get() as { n: number };
      counts[name] = row.n;
    }
    return counts;
  }

  /** `PRAGMA quick_check`: empty array when ok, else the problems reported. */
  quickCheck(): string[] {
    return checkRows(this.handle.pragma("quick_check") as Row[]);
  }

  integrityCheck(): string[] {
    return checkRows(this.handle.pragma("integrity_check") as Row[]);
  }

  foreignKeyCheck(): string[] {
    const rows = this.handle.pragma("foreign_key_check") as Array<{ table: string; rowid: number; parent: string }>;
    return rows.map((r) => `${r.table} row ${r.rowid} references a missing ${r.parent} row`);
  }

  /**
   * Makes every committed transaction durable now: synchronous=NORMAL leaves the WAL unsynced until the
   * next checkpoint, which is fine for rows but not before deleting or moving the file they came from.
   */
  syncWal(): void {
    syncWalOf(this.path);
  }

  /** Checkpoint (TRUNCATE) when writable, then close; the last close also removes WAL sidecars. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.statements.clear();
    try {
      if (this.mode === "write" && this.handle.open) this.handle.pragma("wal_checkpoint(TRUNCATE)");
    } catch {
      // Another connection may be mid-transaction; the WAL stays valid and the next checkpoint takes it.
    }
    if (this.handle.open) this.handle.close();
    this.cleanup?.();
  }
}

function checkRows(rows: Row[]): string[] {
  const messages = rows.map((r) => String(Object.values(r)[0]));
  return messages.length === 1 && messages[0] === "ok" ? [] : messages;
}

/** Kysely configured to compile only: the driver never runs (execution goes through better-sqlite3). */
export function createQueryBuilder<DB>(): Kysely<DB> {
  return new Kysely<DB>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
}

export function schemaSqlFor(role: DbRole): string {
  return role === "global" ? GLOBAL_SCHEMA_SQL : AGENT_SCHEMA_SQL;
}

export { isSqliteFile } from "./sqlite-header.js";

export function openDatabase<DB>(options: OpenDatabaseOptions): StateDatabase<DB> {
  const file = options.path;
  const exists = fs.existsSync(file);
  if (!exists && options.mode === "write" && options.create) refuseLinkedCreate(file, options.root);
  if (exists) refuseUnsafeExisting(file, options.root);
  if (!exists && !(options.mode === "write" && options.create)) {
    throw new NotFoundError(`Database ${file} does not exist; run \`openclaw-state doctor --fix\` to create it.`, { path: file });
  }
  // `created` means "this open applied the schema": creating the empty file is not enough, since
  // another process may win the race to the schema in between.
  let created = false;
  if (!exists) {
    try {
      if (options.root) ensurePrivateDirBelow(options.root, path.dirname(file));
      else ensurePrivateDir(path.dirname(file));
    } catch (error) {
      if (!(error instanceof UnsafePathError)) throw error;
      throw new DatabaseError(`Refusing to create database ${file}: ${error.message}; remove the link and re-run.`, { path: file });
    }
    ensurePrivateFile(file);
  }
  let handle: Database.Database;
  let cleanup: (() => void) | undefined;
  let format: DbFormat;
  try {
    ({ handle, cleanup } = openHandle(file, options.mode, options.busyTimeoutMs ?? defaultBusyTimeoutMs()));
  } catch (error) {
    // Name the real cause: a read-only mount or missing permission is not a damaged database.
    const reason = unwritableReason(file);
    throw new DatabaseError(`Cannot open database ${file}: ${describeError(error)}${reason ? ` (${reason})` : ""}.`, { path: file, cause: error });
  }
  try {
    // busy_timeout first: every later statement, pragmas included, is then protected against SQLITE_BUSY.
    handle.pragma(`busy_timeout = ${options.busyTimeoutMs ?? defaultBusyTimeoutMs()}`);
    format = detectFormat(handle, options.role);
    const version = format.userVersion;
    if (options.formats !== "any") refuseForeignFormat(file, format);
    if (options.mode === "write" && options.formats === "any" && format.id !== "new" && !isOurFormat(format)) {
      // formats: "any" — a write open of another format (a lease row, a restore) changes no schema at all.
      handle.pragma("foreign_keys = ON");
    } else if (options.mode === "write") {
      enableWal(handle, options.busyTimeoutMs ?? defaultBusyTimeoutMs());
      handle.pragma("synchronous = NORMAL");
      handle.pragma("foreign_keys = ON");
      if (version === 0) {
        created = applySchema(handle, options);
        format = detectFormat(handle, options.role);
      } else applyAdditiveSchema(handle, options.role);
    } else {
      handle.pragma("query_only = ON");
      handle.pragma("foreign_keys = ON");
      if (version === 0 && options.formats !== "any") {
        throw new DatabaseError(
          `Database ${file} has no openclaw schema (user_version 0); run \`openclaw-state doctor\` to see why.`,
          { path: file },
        );
      }
    }
  } catch (error) {
    handle.close();
    cleanup?.();
    const reason = error instanceof DatabaseError || error instanceof SchemaVersionError || error instanceof SchemaFormatError ? null : unwritableReason(file);
    if (reason) throw new DatabaseError(`Cannot open database ${file} for ${options.mode === "write" ? "writing" : "reading"}: ${describeError(error)} (${reason}).`, { path: file, cause: error });
    throw error;
  }
  const db = new StateDatabase<DB>(handle, options, created, format!);
  db.cleanup = cleanup;
  return db;
}

/**
 * The typed rows of this tool describe one format: a database in any other is refused before a statement reads
 * or writes a row, with who wrote it and what still works on it (docs/compat.md).
 */
function refuseForeignFormat(file: string, format: DbFormat): void {
  if (format.id === "new" || isOurFormat(format)) return;
  if (format.id === "unknown" && format.userVersion === 0) return; // the "no openclaw schema" checks below name it
  if (format.id === "openclaw-newer") {
    throw new SchemaVersionError(
      `Database ${file} was written by ${format.writtenBy}; this openclaw-state cannot interpret it: upgrade openclaw-state (\`inspect\`, \`doctor\` and \`backup\` still work on it); the file was not touched.`,
      { path: file, writtenBy: format.writtenBy },
    );
  }
  throw new SchemaFormatError(
    `Database ${file} was written by ${format.writtenBy}; this openclaw-state reads and writes rows only in its own format (design-document v1) so far, and cannot interpret it (\`inspect\`, \`doctor\` and \`backup\` still work on it; see docs/compat.md); the file was not touched.`,
    { path: file, writtenBy: format.writtenBy },
  );
}

/** The format of an ATTACHed schema (the same rule as detectFormat, on `schema.sqlite_master`). */
function detectAttached(handle: Database.Database, schema: string, role: DbRole): DbFormat {
  const version = handle.pragma(`${schema}.user_version`, { simple: true }) as number;
  const tables = new Set((handle.prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table'`).all() as Array<{ name: string }>).map((r) => r.name));
  return classifyFormat(role, version, tables);
}

/**
 * A new database is never created through a symlink: not at the file itself (a dangling link would have
 * SQLite create its target, wherever it points, with the umask's mode), nor on a directory between `root`
 * and the file (a linked `agents/` would put the database outside the state dir).
 */
function refuseLinkedCreate(file: string, root: string | undefined): void {
  const st = lstatOrNull(file);
  let link = st?.isSymbolicLink() ? file : null;
  if (!link && root) link = symlinkOnPath(root, path.dirname(file));
  if (!link) return;
  let points = "";
  try {
    points = ` (it points to ${fs.readlinkSync(link)})`;
  } catch {
    // Gone since the lstat: the message still names the path.
  }
  throw new DatabaseError(
    `Refusing to create database ${file}: ${link} is a symbolic link${points}, and openclaw-state never creates a database through a link; remove the link (or restore the state from a backup) and re-run.`,
    { path: file },
  );
}

/**
 * An existing database is opened only as a regular file reached without a link from `root`: a symlink at the file or
 * on a directory below `root` could lead out of the state dir (and SQLite writes there: the -wal/-shm sidecars, a
 * checkpoint), and a FIFO or device would block the open or the first read. The sidecars SQLite opens beside it are
 * held to the same rule. Without `root` (a library caller's own path, or a path outside it) only what the path
 * reaches must be a regular file. A check before the open, not an O_NOFOLLOW open (better-sqlite3 does not pass
 * SQLite's open flags): a link planted between the two is not caught.
 */
function refuseUnsafeExisting(file: string, root: string | undefined): void {
  const problem = databasePathProblem(root, file);
  if (!problem) return;
  throw new DatabaseError(
    `Refusing to open database ${file}: ${problem}; openclaw-state opens a database only as a regular file inside the state dir, reached without a link: replace the link or special file with the database itself (or restore the state from a backup) and re-run.`,
    { path: file },
  );
}

/**
 * Read mode opens the existing file read-write with query_only: a true read-only open of a WAL
 * database leaves -wal/-shm behind, whereas the last read-write close removes them.
 */
function openHandle(file: string, mode: OpenMode, timeoutMs: number): ReadOnlyHandle {
  if (mode === "write") return { handle: new Database(file) };
  if (unwritableReason(file) !== null) return openReadOnlyHandle(file, timeoutMs);
  return { handle: new Database(file, { fileMustExist: true }) };
}

/**
 * Switching a new file to WAL needs an exclusive lock and SQLite answers SQLITE_BUSY at once, without
 * the busy handler, when another first open holds it; so retry here within the same busy timeout.
 */
function enableWal(handle: Database.Database, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt += 1) {
    try {
      handle.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.min(5 + attempt * 5, 50));
    }
  }
}

function isEmptySchema(handle: Database.Database): boolean {
  const row = handle.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number };
  return row.n === 0;
}

/**
 * Objects added to schema v1 after its release (the `@additive` section, all IF NOT EXISTS): a write open of
 * an older v1 file creates the missing ones. The write lock is taken only when something is missing.
 */
function applyAdditiveSchema(handle: Database.Database, role: DbRole): void {
  const [objects, sql] = role === "global" ? [GLOBAL_SCHEMA_ADDITIVE_OBJECTS, GLOBAL_SCHEMA_ADDITIVE_SQL] : [AGENT_SCHEMA_ADDITIVE_OBJECTS, AGENT_SCHEMA_ADDITIVE_SQL];
  if (objects.length === 0) return;
  const present = handle.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name IN (${objects.map(() => "?").join(", ")})`).get(...objects) as { n: number };
  if (present.n === objects.length) return;
  handle.transaction(() => handle.exec(sql)).immediate();
}

/** Creates the schema; false when another process created it first (both saw user_version 0 before locking). */
function applySchema(handle: Database.Database, options: OpenDatabaseOptions): boolean {
  const now = Date.now();
  return handle.transaction(() => {
    // Re-read under the write lock: two first opens of the same new file race to here, and the
    // loser must see the winner's committed schema rather than mistake it for foreign tables.
    if ((handle.pragma("user_version", { simple: true }) as number) !== 0) return false;
    if (!isEmptySchema(handle)) {
      throw new DatabaseError(
        `Database ${options.path} has tables but no openclaw schema version; it is not an openclaw-state database and was left untouched.`,
        { path: options.path },
      );
    }
    handle.exec(schemaSqlFor(options.role));
    handle
      .prepare(
        "INSERT INTO schema_meta (meta_key, role, schema_version, agent_id, app_version, created_at, updated_at) VALUES ('primary', ?, ?, ?, ?, ?, ?)",
      )
      .run(options.role, SCHEMA_VERSION, options.agentId ?? null, toolVersion(), now, now);
    handle.pragma(`user_version = ${SCHEMA_VERSION}`);
    return true;
  }).immediate();
}

/**
 * Makes the commits in `<dbPath>-wal` durable (see Database.syncWal): also for a database another connection
 * wrote as an attached schema. A missing WAL was checkpointed and removed by its last connection: already durable.
 */
export function syncWalOf(dbPath: string): void {
  let fd: number;
  try {
    fd = fs.openSync(`${dbPath}-wal`, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
