// Storage checks: state dir, global and agent databases (openable, schema, integrity) and the agent registry.
import fs from "node:fs";
import path from "node:path";
import { tryNormalizeAgentId } from "../../state/agent-id.js";
import { agentDbPath } from "../../state/paths.js";
import { legacyStateDirItems } from "../../migration/inventory.js";
import type { AgentDB } from "../../state/generated/agent-db.js";
import type { GlobalDB } from "../../state/generated/global-db.js";
import { OPENCLAW_CURRENT } from "../../state/db-format.js";
import { probeDatabase, type DatabaseProbe } from "../../state/probe.js";
import {
  discoverAgentDirs,
  listRegisteredAgents,
  registerAgentDatabase,
  unregisterAgentDatabase,
  type RegistryRow,
} from "../../state/state-databases.js";
import type { StateDatabase } from "../../state/database.js";
import { inspectStateDir } from "../../state/state-dir.js";
import { unwritableReason } from "../../state/read-only-open.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding, Repair } from "../types.js";

const CURRENT_FORMAT_DETAIL = "The format openclaw-state writes: `doctor --fix` merges legacy files into it, `sessions list/show/tail` read it, `backup` copies it (docs/compat.md).";
const OLDER_FORMAT_DETAIL = "openclaw-state reads, backs up and restores this format but does not write into it; `openclaw doctor --fix` (OpenClaw's own) upgrades it (docs/compat.md).";

function probeFindings(id: string, label: string, probe: DatabaseProbe): Finding[] {
  const found = statusFindings(id, label, probe);
  // A check that passed but could not cover everything says so: "passed" alone would claim more than was checked.
  if (probe.checkLimit !== null && probe.problems?.length === 0) {
    found.push({ id: `${id}.check-limit`, severity: "warning", title: `${label}: ${probe.check} did not cover everything`, detail: probe.checkLimit, path: probe.path });
  }
  return found;
}

function statusFindings(id: string, label: string, probe: DatabaseProbe): Finding[] {
  switch (probe.status) {
    case "missing":
      return [];
    case "too-new":
      return [{ id, severity: "error", title: `${label} was written by ${probe.format?.writtenBy ?? "a newer program"}`, detail: probe.message, fix: "Upgrade openclaw-state to one that knows this format; the file is left untouched (`backup create` still copies and verifies it).", path: probe.path }];
    case "foreign":
      if (probe.problems && probe.problems.length > 0) {
        return [{ id: `${id}.integrity`, severity: "error", title: `${label} fails ${probe.check}`, detail: probe.problems.slice(0, 5).join("; "), fix: "Restore it from a backup (`openclaw-state backup restore`).", path: probe.path }];
      }
      // Intact, and OpenClaw's own. The current format is the one `doctor --fix` ends in (legacy files merge into it);
      // an older OpenClaw format is only read and backed up, OpenClaw's own doctor upgrades it.
      return [{ id: `${id}.format`, severity: "info", title: `${label} written by ${probe.format?.writtenBy ?? "OpenClaw"}${probe.check ? `, ${probe.check} passed` : ""}`, detail: probe.format?.current ? CURRENT_FORMAT_DETAIL : OLDER_FORMAT_DETAIL, path: probe.path }];
    case "not-ours":
      return [{ id, severity: "error", title: `${label} is not an openclaw-state database`, detail: probe.message, fix: "Move the file aside and run `doctor --fix` to create a fresh one.", path: probe.path }];
    case "unopenable": {
      // A read-only mount or missing permission is not damage: restoring over the file would be the wrong advice.
      const reason = unwritableReason(probe.path);
      if (reason) {
        return [{ id, severity: "error", title: `${label} cannot be read here (${reason})`, detail: probe.message, fix: "Check the mount and the file permissions (run as the owner of the state); the file itself may be intact, so do not restore over it.", path: probe.path }];
      }
      return [{ id, severity: "error", title: `${label} cannot be opened`, detail: probe.message, fix: "Restore it from a backup (`openclaw-state backup restore`).", path: probe.path }];
    }
    case "ok":
      if (probe.problems && probe.problems.length > 0) {
        return [{ id: `${id}.integrity`, severity: "error", title: `${label} fails ${probe.check}`, detail: probe.problems.slice(0, 5).join("; "), fix: "Restore it from a backup (`openclaw-state backup restore`).", path: probe.path }];
      }
      return [
        {
          id,
          severity: "info",
          title: `${label} ok (schema v${probe.schemaVersion}${probe.check ? `, ${probe.check} passed` : ""})`,
          // The design document's format is ours alone: say how to get one the real gateway opens (docs/compat.md).
          detail: `In openclaw-state's design-document format v1, which OpenClaw ${OPENCLAW_CURRENT.release} does not open; \`openclaw-state migrate upgrade\` rewrites it in OpenClaw's format (the old file is kept).`,
          path: probe.path,
        },
      ];
  }
}

export const storageCheck: DoctorCheck = {
  id: "storage",
  run(ctx: CheckContext): CheckResult {
    const { paths } = ctx;
    const findings: Finding[] = [];
    const repairs: Repair[] = [];
    const dir = inspectStateDir(paths);
    const stateDirExists = dir.status === "directory";
    if (dir.status === "not-a-directory") {
      findings.push({
        id: "state-dir.not-a-dir",
        severity: "error",
        title: `State path ${paths.stateDir} is ${dir.description}, not a directory`,
        path: paths.stateDir,
        fix: "Point --state-dir / OPENCLAW_STATE_DIR at the real state directory, or move that file aside; no command writes there until then.",
      });
      return { findings, repairs };
    }
    if (dir.status === "missing") {
      // A legacy ~/.clawdbot-style dir about to be moved into place is a state, just not migrated yet.
      const moving = legacyStateDirItems(paths).some((i) => i.action === "move");
      findings.push(
        moving
          ? { id: "state-dir.missing", severity: "warning", title: "State directory does not exist yet (the legacy state dir moves there)", path: paths.stateDir, fix: "`doctor --fix` moves the legacy state dir into place and migrates it." }
          : {
              id: "state-dir.missing",
              severity: "error",
              title: `No OpenClaw state at ${paths.stateDir}: the directory does not exist`,
              path: paths.stateDir,
              fix: "Check --state-dir / OPENCLAW_STATE_DIR for a typo; to start a new, empty state there run `openclaw-state doctor --fix`.",
            },
      );
    }

    const unwritable = stateDirExists ? unwritableReason(paths.globalDbPath) ?? unwritableReason(path.join(paths.stateDir, "x")) : null;
    if (unwritable) {
      findings.push({
        id: "state-dir.read-only",
        severity: "warning",
        title: `State directory is not writable (${unwritable})`,
        detail: "Databases are read without writing a byte (through a temporary copy when SQLite needs one); nothing here can be changed.",
        path: paths.stateDir,
        fix: "Read commands work as they are; remount read-write (or run as the owner) before `doctor --fix`, `backup restore` or `reset`.",
      });
    }

    const globalProbe = probeDatabase<GlobalDB, RegistryRow[]>(paths.globalDbPath, "global", undefined, { deep: ctx.deep, root: paths.stateDir }, (db) => listRegisteredAgents(db));
    if (globalProbe.status === "missing") {
      if (stateDirExists) {
        findings.push({ id: "global-db.missing", severity: "warning", title: "Global database does not exist", path: paths.globalDbPath, fix: `\`doctor --fix\` creates it, in OpenClaw ${OPENCLAW_CURRENT.release}'s format.` });
      }
      repairs.push({
        id: "global-db.create",
        description: `create the global database ${paths.globalDbPath}`,
        order: 0,
        apply: (rctx) => (rctx.global.created ? "created" : "already present"),
      });
    } else {
      findings.push(...probeFindings("global-db", "Global database", globalProbe));
    }

    const agents = discoverAgentDirs(paths, { all: false });
    for (const agent of agents) {
      if (agent.agentId === null) {
        findings.push({ id: "agent-db.invalid-id", severity: "warning", title: `Agent directory ${JSON.stringify(agent.dirName)} is not a valid agent id; it is ignored`, path: agent.dbPath, fix: "Rename the directory to a lower-case id ([a-z0-9_-])." });
        continue;
      }
      const probe = probeDatabase<AgentDB>(agent.dbPath, "agent", agent.agentId, { deep: ctx.deep, root: paths.stateDir });
      findings.push(...probeFindings(`agent-db`, `Agent database "${agent.agentId}"`, probe));
    }

    const registry = globalProbe.extra;
    if (globalProbe.status === "ok" && registry) {
      const registered = new Map(registry.map((r) => [r.agent_id, r]));
      for (const agent of agents) {
        if (agent.agentId === null) continue;
        if (!registered.has(agent.agentId)) {
          const agentId = agent.agentId;
          findings.push({ id: "registry.unregistered", severity: "warning", title: `Agent database "${agentId}" is not in the agent_databases registry`, path: agent.dbPath, fix: "`doctor --fix` registers it." });
          repairs.push({ id: "registry.register", description: `register agent "${agentId}" in agent_databases`, order: 10, apply: (rctx) => registerAgentDatabase(rctx.global, agentId, agent.dbPath) });
        }
      }
      for (const row of registry) {
        // A copied or moved state dir keeps the original's absolute paths: this state's database is the one to use.
        const expected = tryNormalizeAgentId(row.agent_id) === row.agent_id ? agentDbPath(paths, row.agent_id) : null;
        if (expected !== null && path.resolve(row.path) !== path.resolve(expected)) {
          const agentId = row.agent_id;
          if (fs.existsSync(expected)) {
            findings.push({ id: "registry.foreign-path", severity: "warning", title: `Registry row for agent "${agentId}" points at ${row.path}, not at this state dir's database (a copied or moved state dir?)`, path: expected, fix: "`doctor --fix` points it at this state dir's database." });
            repairs.push({ id: "registry.repoint", description: `point agent "${agentId}" in agent_databases at ${expected}`, order: 10, apply: (rctx) => registerAgentDatabase(rctx.global, agentId, expected) });
          } else {
            findings.push({ id: "registry.foreign-path", severity: "warning", title: `Registry row for agent "${agentId}" points at ${row.path}, outside this state dir, and this state dir has no database for it`, path: row.path, fix: "`doctor --fix` removes the row (the file it names is left alone)." });
            repairs.push({ id: "registry.unregister", description: `remove the registry row for agent "${agentId}" that points outside the state dir`, order: 10, apply: (rctx) => unregisterAgentDatabase(rctx.global, agentId) });
          }
          continue;
        }
        if (!fs.existsSync(row.path)) {
          findings.push({ id: "registry.missing-file", severity: "warning", title: `Registry row for agent "${row.agent_id}" points at a missing file`, path: row.path, fix: "`doctor --fix` removes the stale registry row." });
          repairs.push({ id: "registry.unregister", description: `remove the stale registry row for agent "${row.agent_id}"`, order: 10, apply: (rctx) => unregisterAgentDatabase(rctx.global, row.agent_id) });
        }
      }
    }
    return { findings, repairs };
  },
};

export type { StateDatabase };
