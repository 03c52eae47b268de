// The compat suite's comparator on small hand-made databases: every compared property, when it differs, is reported.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { diffRows, diffSchemas, normalizeSql, readRows, readSchema } from "./helpers/schema-compare.js";
import { sqliteReader } from "./helpers/sqlite-reader.js";

const reader = sqliteReader();
const dir = mkdtempSync(join(tmpdir(), "openclaw-compat-cmp-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function db(script: string): string {
  const file = join(dir, `db-${++n}.sqlite`);
  reader.execScript(file, script);
  return file;
}

const BASE = `
CREATE TABLE parent (id TEXT NOT NULL PRIMARY KEY) STRICT;
CREATE TABLE child (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  parent_id TEXT NOT NULL REFERENCES parent (id) ON DELETE CASCADE,
  status TEXT NOT NULL DEFAULT 'new',
  note TEXT
) STRICT;
CREATE INDEX child_status_idx ON child (status, id DESC);
CREATE INDEX child_open_idx ON child (parent_id) WHERE status = 'open';
CREATE TABLE kv (k TEXT NOT NULL PRIMARY KEY, v TEXT) WITHOUT ROWID;
CREATE TRIGGER child_touch AFTER UPDATE ON child BEGIN UPDATE parent SET id = id WHERE id = NEW.parent_id; END;
PRAGMA user_version = 7;
`;

const labels = { expected: "theirs", actual: "ours" };
const diff = (a: string, b: string): string[] => diffSchemas(readSchema(reader, db(a)), readSchema(reader, db(b)), labels);

describe(`schema comparator (${reader.name})`, () => {
  it("finds no difference between two spellings of the same schema (comments, case, quotes, whitespace, IF NOT EXISTS)", () => {
    const respelled = BASE.replace("CREATE TABLE kv", "-- a comment\ncreate table if not exists \"kv\"")
      .replace("CREATE TRIGGER child_touch AFTER UPDATE ON child BEGIN", "CREATE TRIGGER IF NOT EXISTS child_touch\n  AFTER UPDATE ON child\nBEGIN\n ");
    expect(diff(BASE, respelled)).toEqual([]);
  });

  it("reports user_version, missing and extra tables, columns, types, NOT NULL, defaults, keys and column order", () => {
    const changed = BASE.replace("PRAGMA user_version = 7", "PRAGMA user_version = 6")
      .replace("status TEXT NOT NULL DEFAULT 'new',\n  note TEXT", "note TEXT,\n  status TEXT DEFAULT 'old',\n  extra BLOB")
      .replace("CREATE TABLE kv (k TEXT NOT NULL PRIMARY KEY, v TEXT) WITHOUT ROWID;", "CREATE TABLE other (x INTEGER);");
    const lines = diff(BASE, changed);
    expect(lines).toEqual(
      expect.arrayContaining([
        "user_version: 7 in theirs, 6 in ours",
        "table kv: missing in ours",
        "table other: not in theirs (extra in ours)",
        "table child: column status: NOT NULL: yes in theirs, no in ours",
        "table child: column status: DEFAULT: 'new' in theirs, 'old' in ours",
        "table child: column extra (BLOB): not in theirs (extra in ours)",
        "table child: column order: id, parent_id, status, note in theirs, id, parent_id, note, status in ours",
      ]),
    );
  });

  it("reports table options: STRICT, WITHOUT ROWID, AUTOINCREMENT", () => {
    const changed = BASE.replace("id INTEGER PRIMARY KEY AUTOINCREMENT", "id INTEGER PRIMARY KEY")
      .replace("CREATE TABLE parent (id TEXT NOT NULL PRIMARY KEY) STRICT;", "CREATE TABLE parent (id TEXT NOT NULL PRIMARY KEY);")
      .replace(") WITHOUT ROWID;", ");");
    expect(diff(BASE, changed)).toEqual(
      expect.arrayContaining([
        "table parent: STRICT: yes in theirs, no in ours",
        "table kv: WITHOUT ROWID: yes in theirs, no in ours",
        "table child: AUTOINCREMENT: yes in theirs, no in ours",
      ]),
    );
  });

  it("reports foreign keys, index names, columns, order, uniqueness and partial WHERE clauses", () => {
    const changed = BASE.replace("ON DELETE CASCADE", "ON DELETE SET NULL")
      .replace("CREATE INDEX child_status_idx ON child (status, id DESC);", "CREATE UNIQUE INDEX child_status_idx ON child (status, id);")
      .replace("WHERE status = 'open'", "WHERE status = 'done'")
      .replace("CREATE TRIGGER", "CREATE INDEX child_note_idx ON child (note);\nCREATE TRIGGER");
    const lines = diff(BASE, changed);
    expect(lines).toEqual(
      expect.arrayContaining([
        "table child: foreign key (parent_id) -> parent (id) ON UPDATE NO ACTION ON DELETE CASCADE MATCH NONE: missing in ours",
        "index child_status_idx: UNIQUE: no in theirs, yes in ours",
        "index child_status_idx: columns: (status, id DESC) in theirs, (status, id) in ours",
        "index child_note_idx: not in theirs (extra in ours)",
      ]),
    );
    expect(lines.some((l) => l.startsWith("index child_open_idx: definition:"))).toBe(true);
  });

  it("reports triggers that are missing, extra or different", () => {
    const changed = BASE.replace("WHERE id = NEW.parent_id", "WHERE id = OLD.parent_id").replace(
      "PRAGMA user_version",
      "CREATE TRIGGER kv_touch AFTER DELETE ON kv BEGIN SELECT 1; END;\nPRAGMA user_version",
    );
    const lines = diff(BASE, changed);
    expect(lines).toContain("trigger kv_touch: not in theirs (extra in ours)");
    expect(lines.some((l) => l.startsWith("trigger child_touch: definition:"))).toBe(true);
  });

  it("keeps string literals intact when normalizing", () => {
    expect(normalizeSql("CREATE TABLE \"T\" (a TEXT DEFAULT 'It''s A') -- c")).toBe("create table t(a text default 'It''s A')");
  });

  it("compares rows by value and type (1, '1' and NULL differ), as multisets", () => {
    const a = db("CREATE TABLE t (k TEXT, v); INSERT INTO t VALUES ('a', 1), ('b', NULL), ('c', 'x'), ('c', 'x');");
    const b = db("CREATE TABLE t (k TEXT, v); INSERT INTO t VALUES ('a', '1'), ('b', NULL), ('c', 'x');");
    const lines = diffRows("t", readRows(reader, a, "t"), readRows(reader, b, "t"), labels);
    expect(lines).toEqual([
      'table t: row only in theirs: [["k","\'a\'"],["v","1"]]',
      'table t: row only in theirs: [["k","\'c\'"],["v","\'x\'"]]',
      'table t: row only in ours: [["k","\'a\'"],["v","\'1\'"]]',
    ]);
    expect(diffRows("t", readRows(reader, a, "t", { ignoreColumns: ["v"] }), readRows(reader, a, "t", { ignoreColumns: ["v"] }), labels)).toEqual([]);
  });
});
