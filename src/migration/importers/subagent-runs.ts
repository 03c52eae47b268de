// Importer for `subagents/runs.json` (the subagent run registry) → subagent_runs, one row per run.
//
// Shape (OpenClaw src/agents/subagent-registry.store.ts): {"version":1|2,"runs":{"<runId>":{runId,
// childSessionKey, requesterSessionKey, controllerSessionKey, requesterOrigin, requesterDisplayKey, task,
// cleanup, label, createdAt, startedAt, endedAt, outcome, cleanupCompletedAt, cleanupHandled, …}}}.
// Version 1 records are upgraded as the runtime does: announceCompletedAt → cleanupCompletedAt,
// announceHandled → cleanupHandled, requesterChannel/requesterAccountId → requesterOrigin, a missing
// controllerSessionKey is the requester; runs without child or requester session key are skipped.
import path from "node:path";
import { OperationError } from "../../core/errors.js";
import type { GlobalDatabase } from "../../state/state-databases.js";
import { isRegularFile, sourceRelativePath } from "../inventory.js";
import { assertUnchanged, inspectJsonSource, objectOf, readJsonSource, shapeError, verifyKeys } from "../json-source.js";
import type { DetectContext, DetectedSource, GlobalSourceImporter, ImportCounts, PlannedSource } from "../types.js";
import { bool, epochMs, flag, obj, str } from "./coerce.js";

type Obj = Record<string, unknown>;

export const SUBAGENT_RUNS_FILE = path.join("subagents", "runs.json");

interface Loaded {
  runs: Array<{ runId: string; record: Obj }>;
  raw: number;
  skipped: string[];
  version: number;
}

function upgrade(record: Obj, legacy: boolean): Obj {
  const { announceCompletedAt, announceHandled, requesterChannel, requesterAccountId, ...rest } = record;
  const cleanupCompletedAt = typeof rest.cleanupCompletedAt === "number" ? rest.cleanupCompletedAt : legacy && typeof announceCompletedAt === "number" ? announceCompletedAt : undefined;
  const cleanupHandled = typeof rest.cleanupHandled === "boolean" ? rest.cleanupHandled : legacy ? Boolean(announceHandled ?? cleanupCompletedAt) : undefined;
  const origin = obj(rest.requesterOrigin) ?? (str(requesterChannel) || str(requesterAccountId) ? { ...(str(requesterChannel) ? { channel: str(requesterChannel) } : {}), ...(str(requesterAccountId) ? { accountId: str(requesterAccountId) } : {}) } : undefined);
  return {
    ...rest,
    childSessionKey: str(rest.childSessionKey),
    requesterSessionKey: str(rest.requesterSessionKey),
    controllerSessionKey: str(rest.controllerSessionKey) ?? str(rest.requesterSessionKey),
    ...(origin ? { requesterOrigin: origin } : {}),
    ...(cleanupCompletedAt !== undefined ? { cleanupCompletedAt } : {}),
    ...(cleanupHandled !== undefined ? { cleanupHandled } : {}),
    spawnMode: rest.spawnMode === "session" ? "session" : "run",
  };
}

function load(file: string, value: unknown): Loaded {
  const o = objectOf(file, value, 'a subagent registry ({"version":2,"runs":{…}})');
  if (o.version !== 1 && o.version !== 2) {
    throw new OperationError("unsupported_version", `${file}: subagent registry version ${JSON.stringify(o.version)} is not supported (expected 1 or 2); the file was left in place.`, { path: file });
  }
  const runs = obj(o.runs);
  if (!runs) throw shapeError(file, 'a "runs" object', o.runs);
  const out: Loaded = { runs: [], raw: 0, skipped: [], version: o.version };
  for (const [key, entry] of Object.entries(runs)) {
    out.raw += 1;
    const record = obj(entry);
    const runId = str(record?.runId) ?? null;
    if (!record || !runId) {
      out.skipped.push(`run ${JSON.stringify(key)} has no runId`);
      continue;
    }
    const up = upgrade(record, o.version === 1);
    if (!up.childSessionKey || !up.requesterSessionKey) {
      out.skipped.push(`run ${JSON.stringify(runId)} has no child or requester session key`);
      continue;
    }
    out.runs.push({ runId, record: up });
  }
  return out;
}

function detect(ctx: DetectContext): DetectedSource[] {
  const file = path.join(ctx.root, SUBAGENT_RUNS_FILE);
  return isRegularFile(file) ? [{ kind: "subagent-runs", agentId: null, path: file, relativePath: sourceRelativePath(ctx.root, file), legacyRoot: false }] : [];
}

function inspect(source: DetectedSource) {
  return inspectJsonSource(source, (value) => {
    const loaded = load(source.path, value);
    return { records: loaded.raw, notes: [...(loaded.version === 1 ? ["version 1 registry: upgraded to version 2 on import"] : []), ...loaded.skipped.map((s) => `${s}: skipped`)] };
  });
}

function importRuns(db: GlobalDatabase, source: PlannedSource): ImportCounts {
  const { value, sha256 } = readJsonSource(source.path);
  assertUnchanged(source, sha256);
  const loaded = load(source.path, value);
  const upsert = db.prepare(
    `INSERT INTO subagent_runs (run_id, child_session_key, requester_session_key, controller_session_key, created_at, ended_at, cleanup_handled, payload_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (run_id) DO UPDATE SET child_session_key = excluded.child_session_key, requester_session_key = excluded.requester_session_key, controller_session_key = excluded.controller_session_key, created_at = excluded.created_at, ended_at = excluded.ended_at, cleanup_handled = excluded.cleanup_handled, payload_json = excluded.payload_json`,
  );
  for (const { runId, record } of loaded.runs) {
    upsert.run(runId, record.childSessionKey, record.requesterSessionKey, record.controllerSessionKey, epochMs(record.createdAt), epochMs(record.endedAt), flag(bool(record.cleanupHandled)) ?? 0, JSON.stringify({ ...record, runId }));
  }
  return {
    records: loaded.raw,
    rows: { subagent_runs: loaded.runs.length },
    skipped: loaded.skipped.length,
    warnings: loaded.skipped.map((s) => `${s}; skipped (it stays in the retired file)`),
    notes: loaded.version === 1 ? ["version 1 registry upgraded (announce* fields → cleanup*, requesterChannel/AccountId → requesterOrigin)"] : [],
    expect: { runs: JSON.stringify(loaded.runs.map((r) => r.runId)) },
  };
}

function verify(db: GlobalDatabase, _source: PlannedSource, expected: ImportCounts): string | null {
  const has = db.prepare("SELECT 1 FROM subagent_runs WHERE run_id = ?").pluck();
  return verifyKeys(expected, "runs", (id) => has.get(id) !== undefined, "subagent run(s)");
}

export const subagentRunsImporter: GlobalSourceImporter = {
  kind: "subagent-runs",
  target: "global",
  label: { one: "legacy subagent registry", many: "legacy subagent registries", records: "runs" },
  targetTable: "subagent_runs",
  targetTables: ["subagent_runs"],
  detect,
  inspect,
  import: importRuns,
  verify,
};
