// Which on-disk format a database is in (by user_version and its tables), and who wrote it: the one place that knows.
import type Database from "better-sqlite3";
import type { DbRole } from "./database.js";

/**
 * - `new`: no schema yet (user_version 0, no objects).
 * - `design-v1`: the design document's schema v1, written by openclaw-state up to 0.1 (what this tool writes today).
 * - `openclaw-v1`: OpenClaw's first SQLite release format (openclaw@2026.6.x, user_version 1).
 * - `openclaw`: a later released OpenClaw format (user_version 2 up to the newest one known here).
 * - `openclaw-newer`: a user_version above the newest released OpenClaw format known here.
 * - `unknown`: tables without a schema version, or a v1 file matching neither v1 format.
 */
export type DbFormatId = "new" | "design-v1" | "openclaw-v1" | "openclaw" | "openclaw-newer" | "unknown";

export interface DbFormat {
  id: DbFormatId;
  role: DbRole;
  userVersion: number;
  /** Only for `openclaw`: the user_version is the newest released OpenClaw's (OPENCLAW_CURRENT). */
  current: boolean;
  /** Who wrote it, for messages: "OpenClaw 2026.9.6 (agent format v23)". */
  writtenBy: string;
}

/** The newest released OpenClaw format this tool knows (observed from openclaw@2026.9.6's own doctor; docs/compat.md). */
export const OPENCLAW_CURRENT = { release: "2026.9.6", global: 18, agent: 23 } as const;
/** OpenClaw's first SQLite release (openclaw@2026.6.33): global and agent user_version 1. */
export const OPENCLAW_FIRST_SQLITE_RELEASE = "2026.6.33";

/**
 * Tables that tell the two user_version-1 formats apart. The design document's v1 keeps sessions in the agent DB
 * (`session_entries`) and device pairing in one table; OpenClaw 2026.6.x keeps sessions in files, auth in the
 * agent DB (`auth_profile_store`) and splits pairing into `device_pairing_paired`/`_pending`.
 */
const V1_MARKERS: Record<DbRole, { design: string; openclaw: string }> = {
  agent: { design: "session_entries", openclaw: "auth_profile_store" },
  global: { design: "device_pairing_entries", openclaw: "device_pairing_paired" },
};

export function currentOpenclawVersion(role: DbRole): number {
  return role === "global" ? OPENCLAW_CURRENT.global : OPENCLAW_CURRENT.agent;
}

/** Reads user_version and the table names (one sqlite_master query); never writes. */
export function detectFormat(handle: Database.Database, role: DbRole): DbFormat {
  const userVersion = handle.pragma("user_version", { simple: true }) as number;
  const tables = new Set(
    (handle.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name),
  );
  return classifyFormat(role, userVersion, tables);
}

export function classifyFormat(role: DbRole, userVersion: number, tables: ReadonlySet<string>): DbFormat {
  const make = (id: DbFormatId, writtenBy: string, current = false): DbFormat => ({ id, role, userVersion, current, writtenBy });
  const newest = currentOpenclawVersion(role);
  if (userVersion === 0) {
    const objects = [...tables].filter((t) => !t.startsWith("sqlite_"));
    return objects.length === 0 ? make("new", "nobody yet (empty)") : make("unknown", "an unknown program (tables but no schema version)");
  }
  if (userVersion === 1) {
    const markers = V1_MARKERS[role];
    if (tables.has(markers.design)) return make("design-v1", `openclaw-state 0.1 (design-document ${role} format v1)`);
    if (tables.has(markers.openclaw)) return make("openclaw-v1", `OpenClaw ${OPENCLAW_FIRST_SQLITE_RELEASE} (${role} format v1)`);
    return make("unknown", `an unknown program (user_version 1, but neither the design document's nor OpenClaw ${OPENCLAW_FIRST_SQLITE_RELEASE}'s ${role} tables)`);
  }
  if (userVersion < 0) return make("unknown", `an unknown program (user_version ${userVersion})`);
  if (userVersion === newest) return make("openclaw", `OpenClaw ${OPENCLAW_CURRENT.release} (${role} format v${userVersion})`, true);
  if (userVersion < newest) return make("openclaw", `an OpenClaw release between ${OPENCLAW_FIRST_SQLITE_RELEASE} and ${OPENCLAW_CURRENT.release} (${role} format v${userVersion})`);
  return make("openclaw-newer", `a newer OpenClaw than ${OPENCLAW_CURRENT.release} (${role} format v${userVersion}; the newest known here is v${newest})`);
}

/** The format this openclaw-state writes and its row readers interpret (until the writers move to OPENCLAW_CURRENT). */
export function isOurFormat(format: DbFormat): boolean {
  return format.id === "design-v1";
}

/** OpenClaw's own format (any release, or a newer one): this tool's importers do not write there. */
export function isOpenclawFormat(format: DbFormat | null | undefined): format is DbFormat {
  return format !== null && format !== undefined && (format.id === "openclaw" || format.id === "openclaw-v1" || format.id === "openclaw-newer");
}

/** The sessions of this format live in `session_nodes` + `session_windows` (OpenClaw's current agent format). */
export function hasCurrentSessionTables(format: DbFormat): boolean {
  return format.role === "agent" && format.id === "openclaw" && format.current;
}
