// Storage core on real SQLite files: pragmas, schema v1, modes, read-only opens, version refusal, registry.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/state/database.js";
import { SCHEMA_VERSION } from "../../src/state/generated/ddl.js";
import { listRegisteredAgents, openAgentDatabase, openGlobalDatabase } from "../../src/state/state-databases.js";
import { makeTempDir, makeTempState, modeOf, repoRoot, snapshotTree } from "../helpers/temp-state.js";

function masterOf(file: string): Array<Record<string, unknown>> {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

describe("openDatabase (write)", () => {
  it("sets busy_timeout, WAL, synchronous=NORMAL and foreign_keys", () => {
    const { paths } = makeTempState();
    const db = openGlobalDatabase(paths, { mode: "write", create: true });
    try {
      expect(db.handle.pragma("busy_timeout", { simple: true })).toBe(30000);
      expect(db.handle.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.handle.pragma("synchronous", { simple: true })).toBe(1);
      expect(db.handle.pragma("foreign_keys", { simple: true })).toBe(1);
      expect(db.userVersion()).toBe(SCHEMA_VERSION);
    } finally {
      db.close();
    }
  });

  it.each([
    ["global", "openclaw-state.sql"],
    ["agent", "openclaw-agent.sql"],
  ] as const)("applies the %s schema exactly as the sqlite3 shell builds it from schema/%s", (role, file) => {
    const dir = makeTempDir();
    const ours = path.join(dir, "ours.sqlite");
    const shell = path.join(dir, "shell.sqlite");
    openDatabase({ path: ours, role, agentId: role === "agent" ? "main" : undefined, mode: "write", create: true }).close();
    execFileSync("sqlite3", [shell, `.read ${path.join(repoRoot, "schema", file)}`]);
    expect(masterOf(ours)).toEqual(masterOf(shell));
    expect(masterOf(ours).length).toBeGreaterThan(10);
  });

  it("writes the schema_meta primary row", () => {
    const { paths } = makeTempState();
    const db = openAgentDatabase(paths, "ops", { mode: "write", create: true });
    try {
      const meta = db.first(db.q.selectFrom("schema_meta").selectAll().where("meta_key", "=", "primary"));
      expect(meta).toMatchObject({ role: "agent", schema_version: 1, agent_id: "ops" });
      expect(meta!.created_at).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });

  it("creates directories 0700 and the database and its WAL sidecars 0600", () => {
    const { paths, stateDir } = makeTempState();
    const db = openAgentDatabase(paths, "main", { mode: "write", create: true });
    db.run(db.q.insertInto("cache_entries").values({ scope: "s", key: "k", value_json: "{}", updated_at: 1 }));
    expect(modeOf(stateDir)).toBe(0o700);
    expect(modeOf(path.join(stateDir, "agents"))).toBe(0o700);
    expect(modeOf(path.join(stateDir, "agents", "main", "agent"))).toBe(0o700);
    expect(modeOf(db.path)).toBe(0o600);
    expect(modeOf(`${db.path}-wal`)).toBe(0o600);
    expect(modeOf(`${db.path}-shm`)).toBe(0o600);
    expect(modeOf(paths.globalDbPath)).toBe(0o600);
    db.close();
    expect(fs.existsSync(`${db.path}-wal`)).toBe(false);
  });

  it("registers agent databases in the global registry on write opens", () => {
    const { paths } = makeTempState();
    openAgentDatabase(paths, "Main", { mode: "write", create: true }).close();
    const global = openGlobalDatabase(paths, { mode: "read" });
    try {
      const rows = listRegisteredAgents(global);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ agent_id: "main", schema_version: 1 });
      expect(rows[0]!.size_bytes).toBeGreaterThan(0);
      expect(rows[0]!.last_seen_at).toBeGreaterThan(0);
    } finally {
      global.close();
    }
  });

  it("runs immediate transactions atomically", () => {
    const { paths } = makeTempState();
    const db = openGlobalDatabase(paths, { mode: "write", create: true });
    try {
      expect(() =>
        db.immediate(() => {
          db.run(db.q.insertInto("tui_last_sessions").values({ scope_key: "a", session_key: "k", updated_at: 1 }));
          throw new Error("boom");
        }),
      ).toThrow("boom");
      expect(db.all(db.q.selectFrom("tui_last_sessions").selectAll())).toHaveLength(0);
      expect(db.quickCheck()).toEqual([]);
      expect(db.integrityCheck()).toEqual([]);
      expect(db.foreignKeyCheck()).toEqual([]);
    } finally {
      db.close();
    }
  });
});

describe("openDatabase (read)", () => {
  it("never creates a missing database or its directories", () => {
    const { paths, root } = makeTempState();
    expect(() => openGlobalDatabase(paths, { mode: "read" })).toThrow(/does not exist/);
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it("leaves no -wal/-shm behind and does not modify the file", () => {
    const { paths } = makeTempState();
    openGlobalDatabase(paths, { mode: "write", create: true }).close();
    const before = snapshotTree(path.dirname(paths.globalDbPath));
    const db = openGlobalDatabase(paths, { mode: "read" });
    db.rowCounts();
    expect(() => db.run(db.q.insertInto("tui_last_sessions").values({ scope_key: "a", session_key: "k", updated_at: 1 }))).toThrow();
    db.close();
    expect(snapshotTree(path.dirname(paths.globalDbPath))).toEqual(before);
  });

  it("refuses a newer user_version and leaves the file unchanged", () => {
    const { paths } = makeTempState();
    openGlobalDatabase(paths, { mode: "write", create: true }).close();
    const raw = new Database(paths.globalDbPath);
    raw.pragma("user_version = 99");
    raw.pragma("journal_mode = DELETE");
    raw.close();
    const before = snapshotTree(path.dirname(paths.globalDbPath));
    for (const mode of ["read", "write"] as const) {
      expect(() => openGlobalDatabase(paths, { mode })).toThrow(/written by a newer OpenClaw than 2026\.9\.6 \(global format v99/);
    }
    expect(snapshotTree(path.dirname(paths.globalDbPath))).toEqual(before);
  });

  it("refuses a foreign SQLite file instead of applying the schema over it", () => {
    const dir = makeTempDir();
    const file = path.join(dir, "foreign.sqlite");
    const raw = new Database(file);
    raw.exec("CREATE TABLE other (x)");
    raw.close();
    expect(() => openDatabase({ path: file, role: "global", mode: "write" })).toThrow(/not an openclaw-state database/);
    expect(masterOf(file).map((r) => r.name)).toEqual(["other"]);
  });
});

describe("openDatabase (first open race)", () => {
  // Several processes opening the same new file at once: the losers must see the winner's schema,
  // never mistake it for a foreign database (this raced in two concurrent `doctor --fix` runs).
  it("every concurrent first open succeeds and exactly one applies the schema", async () => {
    const moduleUrl = new URL(`file://${path.join(repoRoot, "dist", "state", "database.js")}`).href;
    for (let round = 0; round < 4; round += 1) {
      const file = path.join(makeTempDir(), "state", "openclaw.sqlite");
      const startAt = Date.now() + 1500;
      const script = [
        `const { openDatabase } = await import(${JSON.stringify(moduleUrl)});`,
        `while (Date.now() < ${startAt}) {}`,
        `const db = openDatabase({ path: ${JSON.stringify(file)}, role: "global", mode: "write", create: true });`,
        `process.stdout.write(db.created ? "created" : "opened"); db.close();`,
      ].join("\n");
      const children = Array.from({ length: 6 }, () =>
        spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] }),
      );
      const results = children.map((child) => {
        const out = { code: -1, stdout: "", stderr: "" };
        child.stdout.on("data", (d: Buffer) => (out.stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (out.stderr += d.toString()));
        return new Promise<typeof out>((resolve) => child.on("close", (code) => resolve({ ...out, code: code ?? -1 })));
      });
      const outs = await Promise.all(results);
      for (const o of outs) expect(o.code, o.stderr).toBe(0);
      expect(outs.filter((o) => o.stdout === "created")).toHaveLength(1);
      expect(masterOf(file).length).toBeGreaterThan(40);
    }
  });
});
