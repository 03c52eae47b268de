// Where each design-v1 (staging) table's rows end up, and in which database file, once the upgrade has written OpenClaw 2026.9.6's format.
import { CONFIG_AUDIT_NAMESPACE } from "./upgrade-global-config-audit.js";
import { SAME_MEANING_TABLES } from "./upgrade-global-copy.js";
import { SHARED_AUTH_AGENT_ID } from "./upgrade-global-auth.js";

/**
 * A destination as shown to the operator: a table name; `config_machine_state (<state_key>)` for a machine-state row;
 * a path pattern relative to the state dir for what is written back as files. A trailing `(if …)` marks a destination
 * only some rows reach (the upgrade drops or diverts the rest, each with a note).
 */
export type OpenclawDestination = string;

/**
 * The database file a destination is in: the global one; the agent's own (the source's agent, and for a session
 * index also each agent its keys file rows under); none for what is written back as files.
 */
export type DestinationDatabase = "global" | "agent" | "none";

/** A destination with the database file it is in (a trailing `(if …)` holds for its place in that file too). */
export interface PlacedDestination {
  destination: OpenclawDestination;
  database: DestinationDatabase;
}

const inGlobal = (destination: OpenclawDestination): PlacedDestination => ({ destination, database: "global" });
const inAgent = (destination: OpenclawDestination): PlacedDestination => ({ destination, database: "agent" });
const asFile = (destination: OpenclawDestination): PlacedDestination => ({ destination, database: "none" });
const machineState = (key: string): PlacedDestination => inGlobal(`config_machine_state (${key})`);

/**
 * Read off the upgrade steps (each entry names the step that writes it, and which file it writes). Tables not listed
 * here and not in SAME_MEANING_TABLES (global) have no mapping: openclawDestinations throws, so an importer writing a
 * new staging table must add it here (test/state/upgrade/openclaw-destinations.test.ts checks every importer's tables).
 */
const STAGING_TO_OPENCLAW: Record<string, readonly PlacedDestination[]> = {
  // upgrade-global-cron.ts
  cron_jobs: [inGlobal("cron_jobs")],
  cron_run_logs: [inGlobal("task_runs")],
  // upgrade-global-channels.ts (commitments: 9.6 retired the store, nothing is written)
  channel_pairing_requests: [inGlobal("channel_pairing_requests")],
  current_conversation_bindings: [inGlobal("current_conversation_bindings")],
  workspace_setup_state: [inGlobal("workspace_setup_state"), inGlobal("workspace_path_aliases")],
  commitments: [],
  // upgrade-global-machine-state.ts
  tui_last_sessions: [machineState("tui.lastSession.<scope>")],
  update_check_state: [machineState("update.checkState")],
  voicewake_triggers: [machineState("voicewake.triggers")],
  voicewake_routing_config: [machineState("voicewake.routing")],
  voicewake_routing_routes: [machineState("voicewake.routing")],
  // upgrade-global-devices.ts: pending/bootstrap entries are dropped; a paired node folds into its paired device
  device_pairing_entries: [inGlobal("device_pairing_paired (if paired)")],
  node_pairing_entries: [inGlobal("device_pairing_paired (if its device is paired as a node)")],
  node_host_config: [machineState("nodeHost.config")],
  web_push_vapid_keys: [machineState("webPush.vapidKeys")],
  // upgrade-global-plugins.ts
  installed_plugin_index: [machineState("plugins.installedIndex")],
  // written back as files by src/migration/media-write-back.ts and upgrade-format.ts (readModelCatalogRows)
  media_blobs: [asFile("media/<subdir>/<id>")],
  agent_model_catalogs: [asFile("agents/<id>/agent/models.json")], // legacy-name-ok: a destination shown in the plan (2026.9.6 reads models.json live), never opened here
  // upgrade-agent-sessions.ts: an entry's ACP metadata moves to the GLOBAL acp_sessions (upgrade-agent-acp.ts)
  sessions: [inAgent("session_windows")],
  session_entries: [inAgent("session_nodes"), inGlobal("acp_sessions (if ACP metadata)")],
  session_routes: [inAgent("session_nodes")],
  conversations: [inAgent("conversations")],
  session_conversations: [inAgent("session_conversations")],
  // upgrade-agent-data.ts: each transcript also gets a fresh rewrite watermark
  transcript_events: [inAgent("transcript_events"), inAgent("transcript_rewrite_watermarks")],
  transcript_event_identities: [inAgent("transcript_event_identities")],
  trajectory_runtime_events: [inAgent("trajectory_runtime_events")],
};

/** What a source is, as far as where its rows go depends on it. */
export interface StagedSource {
  /** The agent a per-agent source belongs to (auth stores: main's is the shared one). */
  agentId: string | null;
  /** The plugin_state_entries namespace the importer writes, when it is fixed (config-audit lines go elsewhere). */
  pluginNamespace?: string;
  /** Staging tables only some files of the kind fill: their destinations are marked conditional. */
  optionalTables?: readonly string[];
  /**
   * Per staging table, whether this one file's rows reach its conditional destinations (read from the file): true
   * drops the `(if …)`, false drops the destination; a table not named keeps the `(if …)`.
   */
  reaches?: Readonly<Record<string, boolean>>;
}

/** The mark of a destination only some rows or files reach. */
export const CONDITIONAL = / \(if [^()]*\)$/;

/**
 * upgrade-global-auth.ts and upgrade-state.ts (addAgentAuth): main's store is the shared one in the global DB;
 * another agent's goes to that agent's own DB.
 */
function authDestinations(table: string, agentId: string | null): readonly PlacedDestination[] {
  const main = agentId === null || agentId === SHARED_AUTH_AGENT_ID;
  if (table === "auth_profile_stores") return [main ? machineState("authProfiles.store") : inAgent("auth_profile_store")];
  return [main ? machineState("authProfiles.state") : inAgent("auth_profile_state")];
}

function destinationsOf(table: string, source: StagedSource): readonly PlacedDestination[] {
  if (table === "auth_profile_stores" || table === "auth_profile_state") return authDestinations(table, source.agentId);
  // upgrade-global-config-audit.ts takes the core/config-audit rows out of the plain copy.
  if (table === "plugin_state_entries" && source.pluginNamespace === CONFIG_AUDIT_NAMESPACE) return [inGlobal("diagnostic_events")];
  // upgrade-global-copy.ts: copied within the global DB.
  if ((SAME_MEANING_TABLES as readonly string[]).includes(table)) return [inGlobal(table)];
  const mapped = STAGING_TO_OPENCLAW[table];
  if (!mapped) throw new Error(`No OpenClaw 2026.9.6 destination is known for the design-v1 table ${table}.`);
  return mapped;
}

/** The OpenClaw 2026.9.6 destinations of a source's staging tables with the file each is in, in order, each once. */
export function placeOpenclawDestinations(stagingTables: readonly string[], source: StagedSource): PlacedDestination[] {
  const optional = new Set(source.optionalTables ?? []);
  const always = new Set(stagingTables.filter((t) => !optional.has(t)).flatMap((t) => destinationsOf(t, source).map((p) => p.destination)));
  const out = new Map<OpenclawDestination, PlacedDestination>();
  for (const t of stagingTables) {
    const reaches = source.reaches?.[t];
    for (const p of destinationsOf(t, source)) {
      const marked = CONDITIONAL.test(p.destination);
      const conditional = marked || (optional.has(t) && !always.has(p.destination));
      let destination = p.destination;
      if (conditional && reaches === false) continue;
      if (conditional && reaches === true) destination = marked ? p.destination.replace(CONDITIONAL, "") : p.destination;
      else if (conditional && !marked) destination = `${p.destination} (if the file holds any)`;
      if (!out.has(destination)) out.set(destination, { destination, database: p.database });
    }
  }
  // A destination this file reaches for sure makes the same one's `(if …)` from another table redundant.
  for (const [destination] of out) {
    const plain = destination.replace(CONDITIONAL, "");
    if (plain !== destination && out.has(plain)) out.delete(destination);
  }
  return [...out.values()];
}

/** The OpenClaw 2026.9.6 destinations of a source's staging tables, in order, each once. */
export function openclawDestinations(stagingTables: readonly string[], source: StagedSource): OpenclawDestination[] {
  return placeOpenclawDestinations(stagingTables, source).map((p) => p.destination);
}

/**
 * The database files placed destinations are in, in order, each once. A file only conditional destinations reach is
 * conditional too: `condition` is their `(if …)` (several joined with "or"), null when some destination always does.
 */
export function destinationDatabases(placed: readonly PlacedDestination[]): Array<{ database: "global" | "agent"; condition: string | null }> {
  const out: Array<{ database: "global" | "agent"; condition: string | null }> = [];
  for (const database of [...new Set(placed.map((p) => p.database))]) {
    if (database === "none") continue;
    const there = placed.filter((p) => p.database === database).map((p) => CONDITIONAL.exec(p.destination)?.[0].trim() ?? null);
    const conditions = [...new Set(there)];
    out.push({ database, condition: conditions.includes(null) ? null : `(if ${conditions.map((c) => c!.slice("(if ".length, -1)).join(" or ")})` });
  }
  return out;
}

/**
 * Rows the upgrade writes for itself, not for any one source: the ledger and agent registry it carries over, and the
 * markers 9.6's doctor writes on every run (the shared-auth location; the cron run-log receipt).
 */
export const UPGRADE_OWN_DESTINATIONS: readonly OpenclawDestination[] = [
  "agent_databases", "migration_runs", "migration_sources", "backup_runs", machineState("auth.sharedStore").destination,
];
