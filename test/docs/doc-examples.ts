// Finds the examples in README.md and docs/**/*.md and the `<!-- example: … -->` markers that say how each one is run.
import fs from "node:fs";
import path from "node:path";

/** Fenced blocks with one of these info strings are examples: each needs a marker (run it, or say why not). */
export const EXAMPLE_LANGUAGES = new Set(["sh", "bash", "shell", "console", "cron", "crontab", "ts", "typescript", "js", "javascript"]);

/** Setups a run starts from (see test/docs/examples.test.ts). */
export const STATES = ["empty", "legacy", "migrated", "backed-up", "locked"] as const;
export type StateName = (typeof STATES)[number];

export type Marker =
  | { kind: "run" | "script" | "lines" | "cron"; exits: number[]; state: StateName; silent: boolean; needs: string[]; noSleep: boolean; raw: string }
  | { kind: "skip"; reason: string; raw: string }
  | { kind: "covered"; by: string; raw: string };

export interface DocBlock {
  /** Repo-relative path of the markdown file. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  info: string;
  body: string;
  markers: Marker[];
  /** Marker text that did not parse (reported as a failure, never ignored). */
  invalid: string[];
}

/** Every markdown file the examples test reads. */
export function docFiles(repoRoot: string): string[] {
  const out = ["README.md"];
  const walk = (dir: string): void => {
    for (const name of fs.readdirSync(path.join(repoRoot, dir)).sort()) {
      const rel = path.join(dir, name);
      if (fs.statSync(path.join(repoRoot, rel)).isDirectory()) walk(rel);
      else if (name.endsWith(".md")) out.push(rel);
    }
  };
  walk("docs");
  return out;
}

function parseMarker(text: string): Marker | string {
  const m = /^(run|script|lines|cron|skip|covered)\b\s*(.*)$/s.exec(text.trim());
  if (!m) return `unknown kind in "${text}"`;
  const [, kind, rest] = m as unknown as [string, string, string];
  if (kind === "skip") {
    const reason = rest.replace(/^[:—–-]\s*/, "").trim();
    return reason ? { kind, reason, raw: text } : `"skip" needs a reason: "${text}"`;
  }
  if (kind === "covered") {
    const by = /^by\s+(\S+)$/.exec(rest.trim());
    return by ? { kind, by: by[1]!, raw: text } : `"covered" needs "by <test file>": "${text}"`;
  }
  const marker = { kind: kind as "run", exits: [0], state: "migrated" as StateName, silent: false, needs: [] as string[], noSleep: false, raw: text };
  for (const word of rest.split(/\s+/).filter(Boolean)) {
    const [key, value] = word.split("=", 2) as [string, string | undefined];
    if (key === "exit" && value && /^\d+(,\d+)*$/.test(value)) marker.exits = value.split(",").map(Number);
    else if (key === "state" && value && (STATES as readonly string[]).includes(value)) marker.state = value as StateName;
    else if (key === "needs" && value) marker.needs = value.split(",");
    else if (key === "silent" && value === undefined) marker.silent = true;
    else if (key === "no-sleep" && value === undefined) marker.noSleep = true;
    else return `unknown option "${word}" in "${text}"`;
  }
  return marker;
}

/** The fenced blocks of one markdown file, each with the example markers in the comment lines just above it. */
export function extractBlocks(repoRoot: string, file: string): DocBlock[] {
  const lines = fs.readFileSync(path.join(repoRoot, file), "utf8").split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trim() !== fence) end += 1;
    const block: DocBlock = { file, line: i + 1, info: open[2]!.trim(), body: lines.slice(i + 1, end).join("\n") + "\n", markers: [], invalid: [] };
    // Markers: the run of HTML comment lines directly above the fence (blank lines between them allowed).
    for (let j = i - 1; j >= 0; j -= 1) {
      const line = lines[j]!.trim();
      if (line === "") continue;
      const comment = /^<!--\s*(.*?)\s*-->$/.exec(line);
      if (!comment) break;
      const example = /^example:\s*(.*)$/s.exec(comment[1]!);
      if (!example) continue;
      const marker = parseMarker(example[1]!);
      if (typeof marker === "string") block.invalid.push(marker);
      else block.markers.unshift(marker);
    }
    blocks.push(block);
    i = end;
  }
  return blocks;
}

/** Whether a block is an example (and so needs a marker). Untagged blocks that read like a command count too. */
export function isExample(block: DocBlock): boolean {
  const language = block.info.split(/\s+/)[0] ?? "";
  if (EXAMPLE_LANGUAGES.has(language)) return true;
  if (language !== "") return false;
  // An untagged command line (not a synopsis with [options]/<args>, not an output header "… — /path").
  const first = block.body.split("\n")[0] ?? "";
  return /^openclaw-state\s/.test(first) && !/[[<—]/.test(first);
}
