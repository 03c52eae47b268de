// `migrate skip` through the built binary, as the attack: a symlinked parent and a FIFO are refused (exit 1), nothing moved, nothing blocked.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir, makeTempState, runBin, snapshotTree } from "../helpers/temp-state.js";
import { rows } from "../helpers/migration.js";

const TIMEOUT_MS = 30_000;

describe("migrate skip at the boundary (binary)", () => {
  it("agents/evil/sessions → elsewhere: refused with unsafe_path, the outside file untouched, nothing under migrated/, no ledger row", async () => {
    const { env, stateDir, paths } = makeTempState("legacy-state");
    const outside = makeTempDir("ocs-elsewhere-");
    const victim = path.join(outside, "victim.jsonl");
    fs.writeFileSync(victim, '{"type":"session","id":"victim"}\n');
    const victimSha = crypto.createHash("sha256").update(fs.readFileSync(victim)).digest("hex");
    fs.mkdirSync(path.join(stateDir, "agents", "evil"), { recursive: true });
    fs.symlinkSync(outside, path.join(stateDir, "agents", "evil", "sessions"));
    const before = snapshotTree(stateDir);

    const run = await runBin(["migrate", "skip", "agents/evil/sessions/victim.jsonl", "--reason", "attack", "--json"], env, { timeoutMs: TIMEOUT_MS });
    expect(run.code, run.stderr).toBe(1);
    const doc = JSON.parse(run.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.error.code).toBe("unsafe_path");
    expect(doc.error.message).toMatch(/Refusing to set aside .*victim\.jsonl: its parent .*agents\/evil\/sessions is a symbolic link/);
    const plain = await runBin(["migrate", "skip", "agents/evil/sessions/victim.jsonl", "--reason", "attack"], env, { timeoutMs: TIMEOUT_MS });
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/nothing was touched there/);

    expect(fs.existsSync(victim)).toBe(true);
    expect(crypto.createHash("sha256").update(fs.readFileSync(victim)).digest("hex")).toBe(victimSha);
    expect(fs.readdirSync(outside)).toEqual(["victim.jsonl"]);
    expect(snapshotTree(stateDir)).toEqual(before);
    expect(fs.existsSync(path.join(stateDir, "migrated"))).toBe(false);
    if (fs.existsSync(paths.globalDbPath)) expect(rows(paths.globalDbPath, "SELECT * FROM migration_sources WHERE source_path LIKE '%victim%'")).toEqual([]);
  });

  it("a FIFO named like a transcript: refused at once (exit 1), never opened, still there", async () => {
    const { env, stateDir } = makeTempState("legacy-state");
    const fifo = path.join(stateDir, "agents", "main", "sessions", "s-fifo.jsonl");
    execFileSync("mkfifo", [fifo]);
    const t0 = Date.now();
    const run = await runBin(["migrate", "skip", "agents/main/sessions/s-fifo.jsonl", "--reason", "attack"], env, { timeoutMs: TIMEOUT_MS });
    expect(Date.now() - t0, "migrate skip hung on the FIFO").toBeLessThan(TIMEOUT_MS);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/Refusing to set aside .*s-fifo\.jsonl: it is a FIFO; nothing was touched there/);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(fs.existsSync(path.join(stateDir, "migrated"))).toBe(false);
  });
});
