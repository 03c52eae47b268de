// What a forward upgrade of one design-document v1 database into OpenClaw's current format returns.
import type { AcpSessionRow } from "./upgrade-agent-acp.js";

/** Rows written per target table (OpenClaw's table names). */
export type TableCounts = Record<string, number>;

export interface UpgradeNote {
  /** Stable id for --json consumers, e.g. "agent.session.no-window", "global.kept-unmapped". */
  code: string;
  /** One sentence naming the row/table and what was done with it. */
  message: string;
}

export interface DbUpgradeResult {
  role: "global" | "agent";
  agentId?: string;
  /** The design-v1 file read (never modified). */
  source: string;
  /** The new file written in OpenClaw's format (the caller swaps it in). */
  target: string;
  /** Rows read per design-v1 table. */
  read: TableCounts;
  /** Rows written per OpenClaw table. */
  written: TableCounts;
  /**
   * Design-v1 rows OpenClaw's format has no home for, per design-v1 table: not written anywhere new. They stay in
   * the design-v1 file, which the upgrade keeps beside the new one (never deleted), and are named in the result.
   */
  unmapped: TableCounts;
  notes: UpgradeNote[];
  /** Agent upgrades: the entries' ACP metadata, written into the new global file by the caller (OpenClaw keeps it there). */
  acpSessions?: AcpSessionRow[];
}
