// Every staging table an importer writes has a known OpenClaw 2026.9.6 destination; per-source rules hold.
import { describe, expect, it } from "vitest";
import { IMPORTERS } from "../../../src/migration/importers/index.js";
import { destinationDatabases, openclawDestinations, placeOpenclawDestinations } from "../../../src/state/upgrade/openclaw-destinations.js";

describe("openclawDestinations", () => {
  it("knows every importer's staging tables", () => {
    for (const i of IMPORTERS) expect(() => openclawDestinations(i.targetTables, { agentId: "main", optionalTables: i.optionalTables }), i.kind).not.toThrow();
    expect(() => openclawDestinations(["no_such_table"], { agentId: null })).toThrow(/no_such_table/);
  });

  it("files main's auth store as the shared machine-state row and another agent's in its own table", () => {
    expect(openclawDestinations(["auth_profile_stores"], { agentId: "main" })).toEqual(["config_machine_state (authProfiles.store)"]);
    expect(openclawDestinations(["auth_profile_stores", "auth_profile_state"], { agentId: "work", optionalTables: ["auth_profile_state"] })).toEqual(["auth_profile_store", "auth_profile_state (if the file holds any)"]);
  });

  it("sends config-audit lines to diagnostic_events, other plugin state to the same table, and staged renames to 9.6's", () => {
    expect(openclawDestinations(["plugin_state_entries"], { agentId: null, pluginNamespace: "config-audit" })).toEqual(["diagnostic_events"]);
    expect(openclawDestinations(["plugin_state_entries"], { agentId: null })).toEqual(["plugin_state_entries"]);
    expect(openclawDestinations(["cron_run_logs"], { agentId: null })).toEqual(["task_runs"]);
    expect(openclawDestinations(["commitments"], { agentId: null })).toEqual([]);
  });

  it("places each destination in its database file: a non-main agent's auth store in its own, ACP metadata in the global one", () => {
    const place = (tables: string[], agentId: string | null, optionalTables?: string[]) => placeOpenclawDestinations(tables, { agentId, optionalTables });
    expect(destinationDatabases(place(["auth_profile_stores", "auth_profile_state"], "main"))).toEqual([{ database: "global", condition: null }]);
    expect(destinationDatabases(place(["auth_profile_stores", "auth_profile_state"], "work", ["auth_profile_state"]))).toEqual([{ database: "agent", condition: null }]);
    expect(place(["session_entries"], "main")).toEqual([
      { destination: "session_nodes", database: "agent" },
      { destination: "acp_sessions (if ACP metadata)", database: "global" },
    ]);
    expect(destinationDatabases(place(["sessions", "session_entries"], "ops"))).toEqual([
      { database: "agent", condition: null },
      { database: "global", condition: "(if ACP metadata)" },
    ]);
    expect(destinationDatabases(place(["device_pairing_entries", "node_pairing_entries"], null))).toEqual([{ database: "global", condition: "(if paired or its device is paired as a node)" }]);
    // Written back as files, or kept nowhere: no database file.
    expect(destinationDatabases(place(["media_blobs"], null))).toEqual([]);
    expect(destinationDatabases(place(["commitments"], null))).toEqual([]);
  });

  it("takes what one file decided: a condition it reaches is named plainly, one it does not is left out, one undecided stays", () => {
    const place = (tables: string[], optionalTables: string[], reaches: Record<string, boolean>) => placeOpenclawDestinations(tables, { agentId: "ops", optionalTables, reaches });
    const index = ["sessions", "session_entries", "conversations", "session_conversations"];
    const optional = ["conversations", "session_conversations"];
    expect(place(index, optional, { session_entries: false, conversations: false, session_conversations: false }).map((p) => p.destination)).toEqual(["session_windows", "session_nodes"]);
    expect(destinationDatabases(place(index, optional, { session_entries: true, conversations: true, session_conversations: true }))).toEqual([
      { database: "agent", condition: null },
      { database: "global", condition: null },
    ]);
    expect(place(index, optional, { session_entries: true, conversations: true, session_conversations: true }).map((p) => p.destination)).toEqual(["session_windows", "session_nodes", "acp_sessions", "conversations", "session_conversations"]);
    // Not decided (the file could not be read): the (if …) stays.
    expect(place(index, optional, {}).map((p) => p.destination)).toEqual(["session_windows", "session_nodes", "acp_sessions (if ACP metadata)", "conversations (if the file holds any)", "session_conversations (if the file holds any)"]);
    expect(place(["device_pairing_entries"], [], { device_pairing_entries: false })).toEqual([]);
    expect(place(["device_pairing_entries"], [], { device_pairing_entries: true })).toEqual([{ destination: "device_pairing_paired", database: "global" }]);
    // A table without conditional destinations is not changed by a decision about it.
    expect(place(["sessions"], [], { sessions: false }).map((p) => p.destination)).toEqual(["session_windows"]);
  });
});
