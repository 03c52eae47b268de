// schema/openclaw/<current>-*.sql (the observed format our typed reads use) against the databases the current OpenClaw's own doctor creates.
// What our own writers produce (schema/openclaw-*.sql, design v1) is not yet this format: docs/compat.md says so.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as ddl from "../../src/state/generated/ddl.js";
import { describeRun, makeSandbox, openclawInstall, pinnedVersions, REPO_ROOT, runDoctorFix, type DoctorRun, type Sandbox } from "./helpers/openclaw.js";
import { diffSchemas, formatDiff, readSchema } from "./helpers/schema-compare.js";
import { sqliteReader } from "./helpers/sqlite-reader.js";

const current = pinnedVersions().versions.find((v) => v.role === "current")!;
const install = openclawInstall(current.version);
const reader = sqliteReader();

/**
 * The user_version our tool stamps for a role: the schema file's own PRAGMA when it sets one, else the generated
 * constant (a per-role one when the generator emits it, else the shared SCHEMA_VERSION).
 */
function ourUserVersion(role: "global" | "agent", fromFile: number): { value: number; source: string } {
  if (fromFile !== 0) return { value: fromFile, source: "the schema file's PRAGMA user_version" };
  const constants = ddl as unknown as Record<string, unknown>;
  const names = role === "global" ? ["GLOBAL_SCHEMA_VERSION", "STATE_SCHEMA_VERSION", "SCHEMA_VERSION"] : ["AGENT_SCHEMA_VERSION", "SCHEMA_VERSION"];
  for (const name of names) {
    if (typeof constants[name] === "number") return { value: constants[name] as number, source: `src/state/generated/ddl.ts ${name}` };
  }
  return { value: 0, source: "nothing (no PRAGMA in the file, no version constant)" };
}

describe.skipIf(!install)(`schema/openclaw/${current.version}-*.sql matches the databases openclaw@${current.version} creates`, () => {
  let theirs: DoctorRun;
  let ours: Sandbox;

  beforeAll(async () => {
    theirs = await runDoctorFix(install!, join(REPO_ROOT, "fixtures", "legacy-state"), { timeoutMs: 300_000 });
    ours = makeSandbox("ours");
  });

  afterAll(() => {
    theirs?.sandbox.cleanup();
    ours?.cleanup();
  });

  it(`its doctor --fix migrates fixtures/legacy-state (exit 0)`, () => {
    expect(theirs.result.code, describeRun(theirs.result)).toBe(0);
  });

  const cases = [
    { role: "global" as const, file: `openclaw/${current.version}-state.sql`, theirDb: (): string => theirs.globalDb, pinned: current.globalUserVersion },
    { role: "agent" as const, file: `openclaw/${current.version}-agent.sql`, theirDb: (): string => theirs.agentDb("main"), pinned: current.agentUserVersion },
  ];

  for (const c of cases) {
    it(`schema/${c.file} creates the ${c.role} database it creates (tables, columns, indexes, triggers, options, user_version)`, () => {
      expect(theirs.result.code, describeRun(theirs.result)).toBe(0);
      const theirShape = readSchema(reader, c.theirDb());
      // The pin in versions.json documents the format; a mismatch means the pin (or the package) is wrong.
      expect(theirShape.userVersion, `openclaw@${current.version} ${c.role} user_version vs scripts/compat/versions.json`).toBe(c.pinned);

      const fresh = join(ours.root, `fresh-${c.role}.sqlite`);
      reader.execScript(fresh, readFileSync(join(REPO_ROOT, "schema", c.file), "utf8"));
      const ourShape = readSchema(reader, fresh);
      const version = ourUserVersion(c.role, ourShape.userVersion);
      ourShape.userVersion = version.value;

      const diff = diffSchemas(theirShape, ourShape, { expected: `openclaw@${current.version}`, actual: `schema/${c.file}` });
      const title = `schema/${c.file} vs the ${c.role} DB of openclaw@${current.version} doctor --fix (read with ${reader.name}; our user_version from ${version.source})`;
      // The count is the assertion; the message is the readable list (a toEqual diff of 100 strings is not).
      expect(diff.length, formatDiff(title, diff)).toBe(0);
    });
  }
});
