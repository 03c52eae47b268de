// describeDatabaseFile's integrity_check covers CHECK constraints: it must not run on a read-only connection, which skips them.
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { describeDatabaseFile } from "../../src/state/sqlite-snapshot.js";
import { makeTempDir } from "../helpers/temp-state.js";

/** A database with one row in a table with two CHECK constraints; the row is written with the checks switched off. */
function databaseWithRow(seq: number, payload: string): string {
  const file = path.join(makeTempDir(), "checked.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE events (seq INTEGER CHECK (seq > 0), payload_json TEXT CHECK (json_valid(payload_json)))");
  db.pragma("ignore_check_constraints = ON");
  db.prepare("INSERT INTO events VALUES (?, ?)").run(seq, payload);
  db.close();
  return file;
}

describe("describeDatabaseFile", () => {
  it("reports a row that breaks a CHECK constraint, which a read-only connection's integrity_check passes", () => {
    const file = databaseWithRow(-1, "{not json");
    // SQLite's own behaviour, the reason describe opens read-write (query_only): read-only skips the CHECKs.
    const readOnly = new Database(file, { readonly: true });
    expect(readOnly.pragma("integrity_check")).toEqual([{ integrity_check: "ok" }]);
    readOnly.close();

    const info = describeDatabaseFile(file, "integrity_check", 1000);
    expect(info.problems).toEqual(["CHECK constraint failed in events"]);
    expect(info.rowCounts).toEqual({});
  });

  it("passes the same table once its row keeps the constraints", () => {
    const file = databaseWithRow(1, "{}");
    const info = describeDatabaseFile(file, "integrity_check", 1000);
    expect(info.problems).toEqual([]);
    expect(info.rowCounts).toEqual({ events: 1 });
  });
});
