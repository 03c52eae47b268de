// The static ban (seed: "Proibições estáticas"): only doctor/migration code may name a legacy state file.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BANNED_RUNTIME_NAMES } from "../../src/migration/legacy-paths.js";
import { repoRoot } from "../helpers/temp-state.js";

/** Folders whose code owns the legacy names: the migration (importers, inventory) and the doctor. */
const ALLOWED = ["src/migration/", "src/doctor/", "src/state/generated/"];
/** A reviewed exception carries this marker on the same line, with the reason. */
const MARKER = "legacy-name-ok:";

const BANNED = BANNED_RUNTIME_NAMES.map((name) => ({ name, re: new RegExp(`^${name.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`) }));

interface Violation {
  line: number;
  name: string;
  text: string;
}

/** String literals (quotes and template text) with their line, comments skipped. */
function literals(source: string): Array<{ text: string; line: number }> {
  const out: Array<{ text: string; line: number }> = [];
  let i = 0;
  let line = 1;
  while (i < source.length) {
    const ch = source[i]!;
    if (ch === "\n") line += 1;
    if (ch === "/" && source[i + 1] === "/") {
      while (i < source.length && source[i] !== "\n") i += 1;
      continue;
    }
    if (ch === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end === -1 ? source.length : end + 2;
      line += (source.slice(i, stop).match(/\n/g) ?? []).length;
      i = stop;
      continue;
    }
    if (ch === '"' || ch === "'" || ch === "`") {
      const start = line;
      let text = "";
      i += 1;
      while (i < source.length && source[i] !== ch) {
        if (source[i] === "\\") {
          text += source[i + 1] ?? "";
          i += 2;
          continue;
        }
        if (source[i] === "\n") line += 1;
        text += source[i];
        i += 1;
      }
      out.push({ text, line: start });
    }
    i += 1;
  }
  return out;
}

function scanSource(source: string): Violation[] {
  const lines = source.split("\n");
  const found: Violation[] = [];
  for (const lit of literals(source)) {
    if (lines[lit.line - 1]?.includes(MARKER)) continue;
    for (const token of lit.text.split(/[^A-Za-z0-9._*-]+/)) {
      const hit = BANNED.find((b) => b.re.test(token));
      if (hit) found.push({ line: lit.line, name: hit.name, text: lit.text.slice(0, 80) });
    }
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith(".ts") ? [full] : [];
  });
}

describe("static ban on legacy file names", () => {
  it("no code outside src/migration/ and src/doctor/ names a legacy state file", () => {
    const violations: string[] = [];
    for (const file of sourceFiles(path.join(repoRoot, "src"))) {
      const rel = path.relative(repoRoot, file).split(path.sep).join("/");
      if (ALLOWED.some((a) => rel.startsWith(a))) continue;
      for (const v of scanSource(fs.readFileSync(file, "utf8"))) violations.push(`${rel}:${v.line}: "${v.name}" in ${JSON.stringify(v.text)}`);
    }
    // Move the code into src/migration/ (or src/doctor/), or mark a reviewed exception with `// legacy-name-ok: <why>`.
    expect(violations).toEqual([]);
  });

  it("the scanner sees names in strings and templates, not in comments, and honours the marker", () => {
    const src = [
      "// sessions.json in a comment is fine",
      "/* so is auth-profiles.json */",
      'const a = path.join(dir, "sessions.json");',
      "const b = `${dir}/cron/jobs.json`;",
      "const c = 'update-offset-default.json';",
      'const d = "device-auth-token"; const e = "transcript.jsonl";',
      'const f = "events.jsonl"; // legacy-name-ok: reviewed',
    ].join("\n");
    expect(scanSource(src).map((v) => [v.line, v.name])).toEqual([
      [3, "sessions.json"],
      [4, "jobs.json"],
      [5, "update-offset-*.json"],
    ]);
  });
});
