// Where each design-v1 (staging) table's rows end up once the upgrade has written OpenClaw 2026.9.6's format.
import { CONFIG_AUDIT_NAMESPACE } from "./upgrade-global-config-audit.js";
import { SAME_MEANING_TABLES } from "./upgrade-global-copy.js";
import { SHARED_AUTH_AGENT_ID } from "./upgrade-global-auth.js";

/**
 * A destination as shown to the operator: a table name; `config_machine_state (<state_key>)` for a machine-state row;
 * a path pattern relative to the state dir for what is written back as files. A trailing `(if …)` marks a destination
 * only some rows reach (the upgrade drops or diverts the rest, each with a note).
 */
export type OpenclawDestination = string;

const machineState = (key: string): OpenclawDestination => `config_machine_state (${key})`;

/**
 * Read off the upgrade steps (each entry names the step that writes it). Tables not listed here and not in
 * SAME_MEANING_TABLES have no mapping: openclawDestinations throws, so an importer writing a new staging table must
 * add it here (test/state/upgrade/openclaw-destinations.test.ts checks every importer's tables).
 */
const STAGING_TO_OPENCLAW: Record<string, readonly OpenclawDestination[]> = {
  // upgrade-global-cron.ts
  cron_jobs: ["cron_jobs"],
  cron_run_logs: ["task_runs"],
  // upgrade-global-channels.ts (commitments: 9.6 retired the store, nothing is written)
  channel_pairing_requests: ["channel_pairing_requests"],
  current_conversation_bindings: ["current_conversation_bindings"],
  workspace_setup_state: ["workspace_setup_state", "workspace_path_aliases"],
  commitments: [],
  // upgrade-global-machine-state.ts
  tui_last_sessions: [machineState("tui.lastSession.<scope>")],
  update_check_state: [machineState("update.checkState")],
  voicewake_triggers: [machineState("voicewake.triggers")],
  voicewake_routing_config: [machineState("voicewake.routing")],
  voicewake_routing_routes: [machineState("voicewake.routing")],
  // upgrade-global-devices.ts: pending/bootstrap entries are dropped; a paired node folds into its paired device
  device_pairing_entries: ["device_pairing_paired (if paired)"],
  node_pairing_entries: ["device_pairing_paired (if its device is paired as a node)"],
  node_host_config: [machineState("nodeHost.config")],
  web_push_vapid_keys: [machineState("webPush.vapidKeys")],
  // upgrade-global-plugins.ts
  installed_plugin_index: [machineState("plugins.installedIndex")],
  // written back as files by src/migration/media-write-back.ts and upgrade-format.ts (readModelCatalogRows)
  media_blobs: ["media/<subdir>/<id>"],
  agent_model_catalogs: ["agents/<id>/agent/models.json"], // legacy-name-ok: a destination shown in the plan (2026.9.6 reads models.json live), never opened here
  // upgrade-agent-sessions.ts: an entry's ACP metadata moves to the global acp_sessions (upgrade-agent-acp.ts)
  sessions: ["session_windows"],
  session_entries: ["session_nodes", "acp_sessions (if ACP metadata)"],
  session_routes: ["session_nodes"],
  conversations: ["conversations"],
  session_conversations: ["session_conversations"],
  // upgrade-agent-data.ts: each transcript also gets a fresh rewrite watermark
  transcript_events: ["transcript_events", "transcript_rewrite_watermarks"],
  transcript_event_identities: ["transcript_event_identities"],
  trajectory_runtime_events: ["trajectory_runtime_events"],
};

/** What a source is, as far as where its rows go depends on it. */
export interface StagedSource {
  /** The agent a per-agent source belongs to (auth stores: main's is the shared one). */
  agentId: string | null;
  /** The plugin_state_entries namespace the importer writes, when it is fixed (config-audit lines go elsewhere). */
  pluginNamespace?: string;
  /** Staging tables only some files of the kind fill: their destinations are marked conditional. */
  optionalTables?: readonly string[];
}

/** The mark of a destination only some rows or files reach. */
export const CONDITIONAL = / \(if [^()]*\)$/;

/** upgrade-global-auth.ts: main's store is the shared one in the global DB; another agent's goes to its own DB. */
function authDestinations(table: string, agentId: string | null): readonly OpenclawDestination[] {
  const main = agentId === null || agentId === SHARED_AUTH_AGENT_ID;
  if (table === "auth_profile_stores") return [main ? machineState("authProfiles.store") : "auth_profile_store"];
  return [main ? machineState("authProfiles.state") : "auth_profile_state"];
}

function destinationsOf(table: string, source: StagedSource): readonly OpenclawDestination[] {
  if (table === "auth_profile_stores" || table === "auth_profile_state") return authDestinations(table, source.agentId);
  // upgrade-global-config-audit.ts takes the core/config-audit rows out of the plain copy.
  if (table === "plugin_state_entries" && source.pluginNamespace === CONFIG_AUDIT_NAMESPACE) return ["diagnostic_events"];
  if ((SAME_MEANING_TABLES as readonly string[]).includes(table)) return [table];
  const mapped = STAGING_TO_OPENCLAW[table];
  if (!mapped) throw new Error(`No OpenClaw 2026.9.6 destination is known for the design-v1 table ${table}.`);
  return mapped;
}

/** The OpenClaw 2026.9.6 destinations of a source's staging tables, in order, each once. */
export function openclawDestinations(stagingTables: readonly string[], source: StagedSource): OpenclawDestination[] {
  const optional = new Set(source.optionalTables ?? []);
  const always = new Set(stagingTables.filter((t) => !optional.has(t)).flatMap((t) => destinationsOf(t, source)));
  const out = stagingTables.flatMap((t) =>
    destinationsOf(t, source).map((d) => (optional.has(t) && !always.has(d) && !CONDITIONAL.test(d) ? `${d} (if the file holds any)` : d)),
  );
  return [...new Set(out)];
}

/**
 * Rows the upgrade writes for itself, not for any one source: the ledger and agent registry it carries over, and the
 * markers 9.6's doctor writes on every run (the shared-auth location; the cron run-log receipt).
 */
export const UPGRADE_OWN_DESTINATIONS: readonly OpenclawDestination[] = [
  "agent_databases", "migration_runs", "migration_sources", "backup_runs", machineState("auth.sharedStore"),
];
