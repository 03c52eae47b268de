// The inventory walk: every file classified, special entries named, current-state dirs not descended, never blocking.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { classifyPath, takeLegacyInventory } from "../../src/migration/legacy-inventory.js";
import { LEGACY_PATH_RULES, matchLegacyRule } from "../../src/migration/legacy-paths.js";
import { planMigration } from "../../src/migration/plan-migration.js";
import { makeTempState, repoRoot } from "../helpers/temp-state.js";

function write(root: string, rel: string, text = "{}\n"): string {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

function entry(plan: Awaited<ReturnType<typeof planMigration>>, rel: string) {
  return [...plan.inventory.entries, ...plan.inventory.current].find((e) => e.relativePath === rel);
}

describe("legacy inventory", () => {
  it("classifies by the seed's table and counts imported files from the registry's detection", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    write(stateDir, "device-pair-notify.json");
    write(stateDir, "telegram/update-offset-default.json");
    write(stateDir, "qqbot/data/credential-backup-1.json");
    write(stateDir, "qqbot/known-users.json");
    write(stateDir, "tasks/runs.sqlite", "x");
    write(stateDir, "stray.bin", "x");
    const plan = await planMigration({ paths });
    expect(plan.inventory.counts.imported).toBe(4); // sessions.json, two transcripts, the sidecar database (detected, then skipped)
    expect(entry(plan, "device-pair-notify.json")).toMatchObject({ class: "core", type: "file", sizeBytes: 3 });
    expect(entry(plan, "telegram")).toMatchObject({ class: "plugin", owner: "Telegram", type: "dir", files: 1 });
    expect(entry(plan, "qqbot")).toMatchObject({ class: "discard", owner: "QQBot", files: 2 });
    // Detected by the sidecar importer, which leaves a file that is not SQLite in place and says why.
    expect(plan.sources.find((s) => s.relativePath === "tasks/runs.sqlite")).toMatchObject({ action: "skip", reason: expect.stringMatching(/not a SQLite database/) });
    expect(entry(plan, "stray.bin")).toMatchObject({ class: "unknown" });
    expect(entry(plan, "openclaw.json")).toMatchObject({ class: "current" });
    // The plugin dir is one entry: its files are not listed one by one.
    expect(plan.inventory.entries.some((e) => e.relativePath.startsWith("telegram/"))).toBe(false);
  });

  it("does not descend into workspaces, plugin packages or migrated/, except a workspace's legacy folders", async () => {
    const { paths, stateDir } = makeTempState();
    fs.mkdirSync(stateDir, { recursive: true });
    write(stateDir, "workspace/project/sessions/sessions.json"); // the user's own files
    write(stateDir, "workspace/project/notes.md", "# notes\n");
    write(stateDir, "workspace-ops/.openclaw/attachments/a.txt", "x");
    write(stateDir, "workspace-ops/.clawhub/lock.json");
    write(stateDir, "extensions/voice-call/node_modules/x/jobs.json");
    write(stateDir, "migrated/20260101T000000000Z-abc/agents/main/sessions/s.jsonl", "x");
    write(stateDir, "credentials/github-token.json");
    write(stateDir, "credentials/matrix/credentials.json");
    const plan = await planMigration({ paths });
    const rels = plan.inventory.entries.map((e) => [e.relativePath, e.class]);
    expect(rels).toEqual([
      ["credentials/matrix", "plugin"],
      ["workspace-ops/.clawhub/lock.json", "core"],
      ["workspace-ops/.openclaw/attachments", "discard"],
    ]);
    expect(plan.inventory.current.map((e) => e.relativePath)).toEqual(["credentials", "extensions", "migrated", "workspace", "workspace-ops"]);
  });

  it("names symlinks, FIFOs and directories where a file is expected, and never opens them", async () => {
    const { paths, stateDir, root } = makeTempState("migration/simple");
    const elsewhere = path.join(root, "elsewhere");
    write(elsewhere, "sessions.json");
    fs.mkdirSync(path.join(stateDir, "agents/work"), { recursive: true });
    fs.symlinkSync(elsewhere, path.join(stateDir, "agents/work/sessions"));
    fs.mkdirSync(path.join(stateDir, "cron/jobs.json"), { recursive: true });
    fs.mkdirSync(path.join(stateDir, "identity"), { recursive: true });
    expect(spawnSync("mkfifo", [path.join(stateDir, "identity/device.json")]).status).toBe(0);
    expect(spawnSync("mkfifo", [path.join(stateDir, "openclaw.json.fifo")]).status).toBe(0);
    fs.symlinkSync("/etc/passwd", path.join(stateDir, "update-check.json"));
    const plan = await planMigration({ paths });
    expect(entry(plan, "agents/work/sessions")).toMatchObject({ class: "special", type: "symlink", reason: expect.stringMatching(/agent work's legacy sessions are not migrated; replace the link/) });
    expect(entry(plan, "cron/jobs.json")).toMatchObject({ class: "special", type: "dir", reason: expect.stringMatching(/directory where the legacy cron job store \(cron-jobs\) is expected/) });
    expect(entry(plan, "identity/device.json")).toMatchObject({ class: "special", type: "fifo" });
    expect(entry(plan, "update-check.json")).toMatchObject({ class: "special", type: "symlink" });
    expect(plan.sources.map((s) => s.relativePath)).not.toContain("update-check.json");
  });

  it("a file named like a source but where no importer reads it is core, with the reason", async () => {
    const { paths } = makeTempState("migration/old-layout");
    const plan = await planMigration({ paths });
    expect(entry(plan, "agents/Bad_Name/sessions/sessions.json")).toMatchObject({ class: "core", reason: expect.stringMatching(/not where the importer reads it/) });
  });

  it("ACPX process leases: only acpx/process-leases.json at the state root is the importer's; any other is unknown, with why", async () => {
    const { paths, stateDir } = makeTempState();
    fs.mkdirSync(stateDir, { recursive: true });
    const leases = '{"version":1,"leases":[]}\n';
    write(stateDir, "acpx/process-leases.json", leases);
    write(stateDir, "process-leases.json", leases);
    write(stateDir, "agents/main/agent/acpx/process-leases.json", leases);
    write(stateDir, "other/acpx/process-leases.json", leases);
    const plan = await planMigration({ paths });
    expect(plan.sources.filter((s) => s.kind === "acpx-process-leases").map((s) => s.relativePath)).toEqual(["acpx/process-leases.json"]);
    expect(entry(plan, "acpx/process-leases.json")).toBeUndefined(); // counted as imported, not listed
    for (const rel of ["process-leases.json", "agents/main/agent/acpx/process-leases.json", "other/acpx/process-leases.json"]) {
      expect(entry(plan, rel), rel).toMatchObject({ class: "unknown", reason: expect.stringMatching(/only acpx\/process-leases\.json at the state root/) });
      expect(classifyPath(stateDir, path.join(stateDir, rel), new Set()), rel).toMatchObject({ class: "unknown", reason: expect.stringMatching(/not the ACPX process leases the importer reads/) });
    }
    // The importer's own path, when no importer detected it here, is still named as its source.
    expect(matchLegacyRule("acpx/process-leases.json", "file")).toMatchObject({ class: "imported", target: "acpx-process-leases" });
  });

  it("caps the listed entries, never the counts", () => {
    const { paths, stateDir } = makeTempState();
    for (let i = 0; i < 30; i += 1) write(stateDir, `junk/f-${i}.txt`, "x");
    const inv = takeLegacyInventory({ paths, root: stateDir, detected: new Set(), maxEntries: 10 });
    expect(inv.entries).toHaveLength(10);
    expect(inv.omitted).toBe(20);
    expect(inv.counts.unknown).toBe(30);
  });

  it("classifies one path like the walk does (ancestors first)", () => {
    const { stateDir } = makeTempState();
    write(stateDir, "workspace/AGENTS.md");
    write(stateDir, "telegram/x/y.json");
    write(stateDir, "credentials/telegram-allowFrom.json");
    expect(classifyPath(stateDir, path.join(stateDir, "workspace/AGENTS.md"), new Set()).class).toBe("current");
    expect(classifyPath(stateDir, path.join(stateDir, "telegram/x/y.json"), new Set())).toMatchObject({ class: "plugin", owner: "Telegram" });
    expect(classifyPath(stateDir, path.join(stateDir, "credentials/telegram-allowFrom.json"), new Set()).class).toBe("core");
    expect(classifyPath(stateDir, path.join(stateDir, "nope.json"), new Set()).type).toBe("missing");
  });

  it("every rule of the table is matched by its own pattern (no rule shadowed by an earlier one)", () => {
    const concrete = (pattern: string): string => pattern.replace(/\*\*\//g, "x/").replace(/\*/g, "k");
    for (const rule of LEGACY_PATH_RULES) {
      expect(matchLegacyRule(concrete(rule.pattern), rule.match ?? "file"), rule.pattern).toBe(rule);
    }
  });
});

describe("docs/migration.md", () => {
  it("has a row for every legacy path of the table (docs and code stay in step)", () => {
    const doc = fs.readFileSync(path.join(repoRoot, "docs/migration.md"), "utf8");
    const missing = LEGACY_PATH_RULES.filter((r) => !doc.includes(`| \`${r.pattern}${r.match === "dir" ? "/" : ""}\` | ${r.class}`)).map((r) => r.pattern);
    expect(missing).toEqual([]);
  });
});
