// `openclaw-state/runtime` from a fresh copy of the sources: `npm pack` builds dist through `prepare`, a consumer imports and type-checks it.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir, makeTempState, repoRoot } from "../helpers/temp-state.js";
import { append, chain, createSession } from "../helpers/transcripts.js";

const run = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" } });

describe("the package's runtime subpath", () => {
  it("packs from a fresh clone (prepare builds dist) and imports as openclaw-state/runtime, typed, from a consumer", () => {
    // A fresh clone of the working tree: tracked and new files, nothing git ignores (no dist/, no node_modules/).
    const clone = path.join(makeTempDir("ocs-clone-"), "openclaw-state");
    const files = run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], repoRoot).split("\0").filter(Boolean);
    for (const rel of files) {
      const from = path.join(repoRoot, rel);
      if (!fs.existsSync(from)) continue; // deleted in the working tree
      fs.mkdirSync(path.dirname(path.join(clone, rel)), { recursive: true });
      fs.copyFileSync(from, path.join(clone, rel));
    }
    expect(fs.existsSync(path.join(clone, "dist"))).toBe(false);
    // Installed dependencies are reused (better-sqlite3 builds from source, too slow for a test).
    fs.symlinkSync(path.join(repoRoot, "node_modules"), path.join(clone, "node_modules"), "dir");

    const packDir = makeTempDir("ocs-pack-");
    const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", packDir], clone)) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const listed = packed[0]!.files.map((f) => f.path);
    expect(listed).toEqual(expect.arrayContaining(["package.json", "dist/runtime/index.js", "dist/runtime/index.d.ts", "dist/index.js", "bin/openclaw-state.js", "schema/openclaw-agent.sql"]));
    expect(listed.some((f) => f.startsWith("src/") || f.startsWith("test/"))).toBe(false);

    // A consumer that depends on the tarball; its dependencies resolve to the installed ones.
    const consumer = makeTempDir("ocs-consumer-");
    const tarball = path.join(packDir, packed[0]!.filename);
    fs.writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: { "openclaw-state": `file:${tarball}` } }));
    const pkgDir = path.join(consumer, "node_modules", "openclaw-state");
    fs.mkdirSync(pkgDir, { recursive: true });
    run("tar", ["xzf", tarball, "-C", pkgDir, "--strip-components=1"], consumer);
    const manifest = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    for (const dep of [...Object.keys(manifest.dependencies), "@types"]) {
      const link = path.join(consumer, "node_modules", dep);
      fs.mkdirSync(path.dirname(link), { recursive: true });
      fs.symlinkSync(path.join(repoRoot, "node_modules", dep), link, "dir");
    }

    const state = makeTempState();
    createSession(state.paths, "main", "s1", "agent:main:main");
    append(state.paths, "main", "s1", chain("m", 3, null));
    const script = `
      const m = await import("openclaw-state/runtime");
      const r = await m.readSessionTranscriptVisibleMessageDelta({ stateDir: ${JSON.stringify(state.stateDir)}, agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" });
      const root = await import("openclaw-state");
      let deep = "blocked";
      try { await import("openclaw-state/dist/runtime/index.js"); deep = "open"; } catch (e) { if (e.code !== "ERR_PACKAGE_PATH_NOT_EXPORTED") throw e; }
      console.log(JSON.stringify({ kind: r.kind, ids: r.entries.map((e) => e.entryId), fns: Object.keys(m).filter((k) => typeof m[k] === "function").sort(), root: typeof root.createProgram, deep }));
    `;
    const out = JSON.parse(run(process.execPath, ["--input-type=module", "-e", script], consumer)) as { kind: string; ids: string[]; fns: string[]; root: string; deep: string };
    expect(out).toMatchObject({ kind: "page", ids: ["m1", "m2", "m3"], root: "function", deep: "blocked" });
    expect(out.fns).toEqual(
      expect.arrayContaining([
        "getSessionEntryAsync",
        "getSessionEntryByIdAsync",
        "listSessionEntries",
        "readSessionUpdatedAtAsync",
        "getConversationSessionAsync",
        "readSessionTranscriptEvents",
        "readSessionTranscriptRawDelta",
        "readSessionTranscriptVisibleMessageDelta",
        "readVisibleSessionTranscriptMessageEntries",
        "readSessionTranscriptCatalogPage",
        "deleteSessionEntry",
      ]),
    );
    expect(fs.existsSync(path.join(consumer, "node_modules", "openclaw-state", "src"))).toBe(false);

    // The `types` condition: a strict TypeScript consumer compiles against the subpath's declarations.
    fs.writeFileSync(
      path.join(consumer, "use.ts"),
      `import { readSessionTranscriptVisibleMessageDelta, type VisibleMessageDeltaResult } from "openclaw-state/runtime";
const pending: Promise<VisibleMessageDeltaResult> = readSessionTranscriptVisibleMessageDelta({ agentId: "main", sessionKey: "k", sessionId: "s", start: "reset-window" });
export const kind = pending.then((r) => (r.kind === "page" ? r.entries.map((e) => e.entryId) : r.kind));
`,
    );
    fs.writeFileSync(path.join(consumer, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", strict: true, noEmit: true, types: ["node"] }, files: ["use.ts"] }));
    run(process.execPath, [path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], consumer);
  }, 240_000);
});
