// Read-only probe of one database file: can it be opened, which schema, is it intact. Never modifies it.
import fs from "node:fs";
import { describeError, OpenclawStateError } from "../core/errors.js";
import { openDatabase, type DbRole, type StateDatabase } from "./database.js";
import { isOurFormat, type DbFormat } from "./db-format.js";

/** `foreign`: intact SQLite in a released OpenClaw's format (format says which); `use` is not called on it. */
export type ProbeStatus = "ok" | "foreign" | "missing" | "too-new" | "unopenable" | "not-ours";

export interface ProbeOptions {
  /** integrity_check + foreign_key_check instead of quick_check. */
  deep?: boolean;
  /** Skip all integrity checks (inspect without --check). */
  skipCheck?: boolean;
  /** Count the rows of every table (names from sqlite_master) of a database `use` is not called on: another format. */
  countForeignRows?: boolean;
  /** The state dir: a database reached through a link below it (or a FIFO, a device) is `unopenable`, never opened. */
  root?: string;
}

export interface DatabaseProbe {
  path: string;
  role: DbRole;
  agentId?: string | undefined;
  status: ProbeStatus;
  message?: string;
  sizeBytes: number | null;
  walBytes: number | null;
  schemaVersion: number | null;
  /** Who wrote it and in which format; null when it could not be opened. */
  format: DbFormat | null;
  /** Empty when intact; null when not checked. */
  problems: string[] | null;
  check: "quick_check" | "integrity_check" | null;
  /**
   * What a check that passed did not cover, and why; null when it covered everything or did not run. On a read-only
   * connection (the file or its directory is not writable by this user) SQLite does not verify CHECK constraints.
   */
  checkLimit: string | null;
  /** With `countForeignRows`: rows per table of a `foreign` or `too-new` database (absent when a count failed). */
  foreignRowCounts?: Record<string, number>;
}

function sizeOf(file: string): number | null {
  try {
    return fs.statSync(file).size;
  } catch {
    return null;
  }
}

const READ_ONLY_CHECK_LIMIT =
  "CHECK constraints not verified: the file (or its directory) is read-only to this user, and SQLite skips CHECK constraints on a read-only connection; run the check as the state's owner to cover them.";

/** Whether any table's declaration has a CHECK constraint (a read-only connection's check skips those). */
function declaresCheckConstraints(handle: StateDatabase<unknown>["handle"]): boolean {
  const rows = handle.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL").all() as Array<{ sql: string }>;
  return rows.some((r) => /\bCHECK\s*\(/i.test(r.sql));
}

/** Opens read-only, runs `use` on the open DB (if any), and returns what was learned. */
export function probeDatabase<DB, T = undefined>(
  file: string,
  role: DbRole,
  agentId: string | undefined,
  options: ProbeOptions = {},
  use?: (db: StateDatabase<DB>) => T,
): DatabaseProbe & { extra?: T } {
  const base: DatabaseProbe = {
    path: file,
    role,
    agentId,
    status: "ok",
    sizeBytes: sizeOf(file),
    walBytes: sizeOf(`${file}-wal`),
    schemaVersion: null,
    format: null,
    problems: null,
    check: null,
    checkLimit: null,
  };
  if (base.sizeBytes === null) return { ...base, status: "missing" };
  let db: StateDatabase<DB>;
  try {
    db = openDatabase<DB>({ path: file, role, agentId, mode: "read", formats: "any", ...(options.root === undefined ? {} : { root: options.root }) });
  } catch (error) {
    const code = error instanceof OpenclawStateError ? error.code : "";
    const status: ProbeStatus = code === "schema_too_new" ? "too-new" : /no openclaw schema/.test(describeError(error)) ? "not-ours" : "unopenable";
    return { ...base, status, message: describeError(error) };
  }
  try {
    base.schemaVersion = db.userVersion();
    base.format = db.format;
    if (db.format.id === "unknown" && db.format.userVersion === 0) {
      return { ...base, status: "not-ours", message: `Database ${file} has no openclaw schema (user_version 0, but tables): ${db.format.writtenBy}.` };
    }
    if (!options.skipCheck) {
      try {
        if (options.deep) {
          base.problems = [...db.integrityCheck(), ...db.foreignKeyCheck()];
          base.check = "integrity_check";
        } else {
          base.problems = db.quickCheck();
          base.check = "quick_check";
        }
        if (base.problems.length === 0 && db.handle.readonly && declaresCheckConstraints(db.handle)) base.checkLimit = READ_ONLY_CHECK_LIMIT;
      } catch (error) {
        base.problems = [describeError(error)];
        base.check = options.deep ? "integrity_check" : "quick_check";
      }
    }
    // The integrity checks above hold for any SQLite; the caller's row reads describe only our format.
    if (!isOurFormat(db.format) && options.countForeignRows) {
      try {
        base.foreignRowCounts = db.rowCounts();
      } catch {
        // A virtual table of a module this SQLite lacks cannot be counted: no counts rather than a failed probe.
      }
    }
    if (db.format.id === "openclaw-newer") return { ...base, status: "too-new", message: `Database ${file} was written by ${db.format.writtenBy}.` };
    if (!isOurFormat(db.format)) return { ...base, status: "foreign", message: `Database ${file} was written by ${db.format.writtenBy}.` };
    const extra = use ? use(db) : undefined;
    return { ...base, extra };
  } catch (error) {
    return { ...base, status: "unopenable", message: describeError(error) };
  } finally {
    db.close();
  }
}
