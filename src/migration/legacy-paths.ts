// Every legacy path the design names (seed: inventory, static bans, per-area notes) with its class; first match wins.
import { SIDECAR_SUFFIXES } from "./importers/trajectory.js";

/**
 * What a file in the state dir is to this tool:
 * - `imported`: an importer of the registry picks it up (the class comes from detection, not from this table);
 * - `core`: core legacy state the design moves to a named table, with no importer here yet (reported, left alone);
 * - `plugin`: owned by a plugin's (or companion app's) own migration, run by `openclaw doctor --fix` with the plugin;
 * - `discard`: cache, lock, temp file or never-shipped sidecar the design deletes or ignores;
 * - `archived`: `*.jsonl.reset.<ts>`, `*.jsonl.deleted.<ts>`, `sessions.json.bak*`: never live, never imported;
 * - `current`: today's state (databases, config, credentials, workspaces, migrated/, backups, plugin packages, logs);
 * - `special`: a symlink, FIFO, socket, device, unreadable directory, or a directory where a file is expected;
 * - `unknown`: none of the above (a rule of this class names a file only to say why no importer reads it).
 */
export type LegacyClass = "imported" | "core" | "plugin" | "discard" | "archived" | "current" | "special" | "unknown";

/** Classes that mean "legacy state left behind": `doctor` warns about each such file. */
export const NOT_IMPORTED_CLASSES: readonly LegacyClass[] = ["core", "plugin", "discard", "archived", "special", "unknown"];

export interface LegacyPathRule {
  /**
   * Relative to the state dir, `/`-separated. `*` matches within one segment, a `**` segment any number of
   * segments (none included).
   */
  pattern: string;
  class: Exclude<LegacyClass, "special">;
  /** `dir`: the rule names a whole directory, reported (or kept) as one entry and not descended into. */
  match?: "file" | "dir";
  /** The plugin or subsystem the file belongs to. */
  owner?: string;
  /** The design's target (table, plugin-state namespace) or, for `imported`, the importer kind. */
  target?: string;
  reason: string;
  /** A non-regular file here is expected (the exec-approvals prompt socket). */
  allowSpecial?: boolean;
  /**
   * `current` directories: what is looked at inside (everything else there is current state too):
   * `all` (small dirs holding legacy files: credentials, logs), a list of sub-paths (workspaces), or nothing.
   */
  descend?: "all" | readonly string[];
}

const never = "never-shipped sidecar SQLite: the design deletes it instead of importing it";
const cache = "runtime cache: rebuilt on demand, not imported";
const pluginMigration = (owner: string, target: string): string => `imported by the ${owner} plugin's own migration into ${target}`;

/**
 * What OpenClaw 2026.9.6's doctor does with a compaction checkpoint (run, not read: test/compat/checkpoint-archive.test.ts):
 * it imports none of a session's checkpoints — a numbered one (`.checkpoint.3`) it reads as a transcript whose header
 * names another session and defers (`historical_transcript_deferred`) — and moves each to
 * `session-sqlite-import-archive/` as unreferenced history, even one the entry's `compactionCheckpoints` names. Only a
 * checkpoint of a topic transcript (`<uuid>-topic-<n>.checkpoint.<id>.jsonl`) no index claims it imports, as
 * `agent:<id>:recovered:<uuid>`. Ours keeps every checkpoint here as the copy of history it is (docs/migration.md).
 */
const CHECKPOINT_REASON =
  "compaction checkpoint (the transcript as it was before a compaction): OpenClaw 2026.9.6 imports none of a session's checkpoints and archives them (one with a non-UUID id, `.checkpoint.3`, it reads as a transcript whose header names another session and does not import either); kept in place, never imported as a session";

/** `<sessionId>.checkpoint.<checkpointId>.jsonl` (OpenClaw writes a UUID as the id; a plain number is read the same way). */
const CHECKPOINT_NAME = /^.+\.checkpoint\.[^./]+\.jsonl$/;

/** A compaction checkpoint's file name: a snapshot of a transcript, not a transcript to import. */
export function isCompactionCheckpointTranscript(name: string): boolean {
  return CHECKPOINT_NAME.test(name) && !isTranscriptSidecar(name);
}

/** Where a workspace holds legacy files (everything else in it is the user's). */
const WORKSPACE_LEGACY_DIRS = [".openclaw", ".openclaw-wiki", ".clawhub", ".dreams", "memory/.dreams"] as const;

/** In match order: specific rules first, then the directories they live in, then the broad "current state" rules. */
export const LEGACY_PATH_RULES: readonly LegacyPathRule[] = [
  // --- Archived leftovers (SPEC §4: never live) ---
  { pattern: "**/*.jsonl.reset.*", class: "archived", reason: "archived transcript left by a session reset: never imported" },
  { pattern: "**/*.jsonl.deleted.*", class: "archived", reason: "archived transcript left by a session delete: never imported" },
  { pattern: "**/sessions.json.bak*", class: "archived", reason: "backup copy of a session index: never imported" },
  { pattern: "**/*.jsonl.lock", class: "discard", reason: "file-era session write lock (SQLite is the concurrency boundary now)" },

  // --- Written by OpenClaw itself (its own doctor's retired sources and working files; seen in 2026.6.33 and 2026.9.6) ---
  // Before the importer rules: `auth-profiles.json.migrated-…` is OpenClaw's retired copy, not a source.
  { pattern: "**/*.migrated", class: "current", owner: "OpenClaw", reason: "retired by OpenClaw's own doctor (renamed after its import): kept as it left it" },
  { pattern: "**/*.migrated.*", class: "current", owner: "OpenClaw", reason: "retired by OpenClaw's own doctor (renamed after its import): kept as it left it" },
  { pattern: "**/*.migrated-*", class: "current", owner: "OpenClaw", reason: "retired by OpenClaw's own doctor (archived after its SQLite import): kept as it left it" },
  { pattern: "**/*.sqlite-import.*.bak", class: "current", owner: "OpenClaw", reason: "copy kept by OpenClaw's own SQLite import" },
  { pattern: "**/*.openai-provider-unification.*.bak", class: "current", owner: "OpenClaw", reason: "copy kept by OpenClaw's OpenAI provider unification repair" },
  { pattern: "agents/*/session-sqlite-import-archive", match: "dir", class: "current", owner: "OpenClaw", reason: "transcripts and session indexes retired by OpenClaw's own session import" },
  { pattern: "session-sqlite-import-archive", match: "dir", class: "current", owner: "OpenClaw", reason: "transcripts and session indexes retired by OpenClaw's own session import" },
  { pattern: "session-sqlite-migration-runs", match: "dir", class: "current", owner: "OpenClaw", reason: "run reports of OpenClaw's own session import" },
  { pattern: "state/openclaw-quarantine.sqlite*", class: "current", owner: "OpenClaw", reason: "OpenClaw's quarantine database (rows its doctor set aside)" },
  { pattern: "tmp/openclaw-*", match: "dir", class: "current", owner: "OpenClaw", reason: "OpenClaw's lock files (*.lock.sqlite write coordinators)" },
  { pattern: "locks", match: "dir", class: "current", owner: "OpenClaw", reason: "OpenClaw's lock files (OAuth refresh, provider auth)" },
  { pattern: "config-journal-fingerprint.key", class: "current", owner: "OpenClaw", reason: "OpenClaw's config journal fingerprint key" },
  { pattern: "plugin-skills", match: "dir", class: "current", owner: "OpenClaw", reason: "OpenClaw's links to plugin-provided skills" },
  { pattern: "agents/*/agent/plugins/*/catalog.json", class: "current", owner: "OpenClaw", reason: "OpenClaw's per-plugin model catalog (a live runtime file)" },

  // --- Transcript sidecars: not transcripts ---
  { pattern: "**/*.trajectory.jsonl", class: "imported", target: "trajectory", reason: `trajectory sidecar (not a transcript) (→ trajectory_runtime_events)` },
  { pattern: "**/*.acp-stream.jsonl", class: "core", reason: `ACP parent-stream debug log (not a transcript; the design keeps no table for old stream logs)` },
  // Before the transcript rules: `<sessionId>.checkpoint.<id>.jsonl` is a copy of a transcript, never a session of its own.
  { pattern: "agents/*/sessions/*.checkpoint.*.jsonl", class: "current", owner: "OpenClaw", reason: CHECKPOINT_REASON },
  { pattern: "sessions/*.checkpoint.*.jsonl", class: "current", owner: "OpenClaw", reason: CHECKPOINT_REASON },

  // --- What the importers of this tool read (documentation; detection decides) ---
  { pattern: "agents/*/sessions/sessions.json", class: "imported", target: "sessions-index", reason: "session index" },
  { pattern: "sessions/sessions.json", class: "imported", target: "sessions-index", reason: "pre-multi-agent session index (agent main)" },
  { pattern: "agents/*/sessions/*.jsonl", class: "imported", target: "transcript", reason: "transcript" },
  { pattern: "sessions/*.jsonl", class: "imported", target: "transcript", reason: "pre-multi-agent transcript (agent main)" },
  { pattern: "cron/jobs.json", class: "imported", target: "cron-jobs", reason: "cron job store" },
  { pattern: "cron/jobs.json.bak", class: "imported", target: "cron-jobs", reason: "backup of the cron job store (OpenClaw 2026.3.28 writes it on every change): imported when the store does not parse, else retired with it" },
  { pattern: "cron/jobs-state.json", class: "imported", target: "cron-state", reason: "cron runtime state" },
  { pattern: "cron/runs/*.jsonl", class: "imported", target: "cron-runs", reason: "cron run log" },
  { pattern: "agents/*/agent/auth-profiles.json", class: "imported", target: "auth-profiles", reason: "auth profiles" },
  { pattern: "agents/*/agent/auth-state.json", class: "imported", target: "auth-state", reason: "auth profile state" },
  { pattern: "agents/*/agent/auth.json", class: "imported", target: "auth-json", reason: "per-agent auth.json" },
  { pattern: "agents/*/agent/models.json", class: "imported", target: "model-catalog", reason: "generated model catalog" },
  { pattern: "credentials/oauth.json", class: "imported", target: "oauth-credentials", reason: "shared OAuth credentials" },
  { pattern: "exec-approvals.json", class: "imported", target: "exec-approvals", reason: "exec approvals" },
  { pattern: "delivery-queue/*.json", class: "imported", target: "delivery-queue", reason: "outbound delivery queue entry" },
  { pattern: "delivery-queue/failed/*.json", class: "imported", target: "delivery-queue", reason: "failed outbound delivery" },
  { pattern: "delivery-queue/*.delivered", class: "imported", target: "delivery-queue", reason: "delivered marker (removed)" },
  { pattern: "session-delivery-queue/*.json", class: "imported", target: "delivery-queue", reason: "session delivery queue entry" },
  { pattern: "session-delivery-queue/failed/*.json", class: "imported", target: "delivery-queue", reason: "failed session delivery" },
  { pattern: "session-delivery-queue/*.delivered", class: "imported", target: "delivery-queue", reason: "delivered marker (removed)" },
  { pattern: "subagents/runs.json", class: "imported", target: "subagent-runs", reason: "subagent run registry" },
  { pattern: "bindings/current-conversations.json", class: "imported", target: "conversation-bindings", reason: "current conversation bindings" },
  { pattern: "identity/device.json", class: "imported", target: "device-identity", reason: "device identity" },
  { pattern: "identity/device-auth.json", class: "imported", target: "device-auth", reason: "device auth tokens" },
  { pattern: "devices/paired.json", class: "imported", target: "device-pairing", reason: "paired devices" },
  { pattern: "devices/pending.json", class: "imported", target: "device-pairing", reason: "pending device pairings" },
  { pattern: "devices/bootstrap.json", class: "imported", target: "device-pairing", reason: "device bootstrap records" },
  { pattern: "nodes/*.json", class: "imported", target: "node-pairing", reason: "node pairing (paired.json, pending.json)" },
  { pattern: "sandbox/containers.json", class: "imported", target: "sandbox-registry", reason: "sandbox container registry" },
  { pattern: "sandbox/browsers.json", class: "imported", target: "sandbox-registry", reason: "sandbox browser registry" },
  { pattern: "sandbox/containers/*.json", class: "imported", target: "sandbox-registry", reason: "sandbox registry shard" },
  { pattern: "sandbox/browsers/*.json", class: "imported", target: "sandbox-registry", reason: "sandbox registry shard" },
  { pattern: "update-check.json", class: "imported", target: "update-check", reason: "update check state" },
  { pattern: "logs/config-health.json", class: "imported", target: "config-health", reason: "config health fingerprints" },
  { pattern: "logs/config-audit.jsonl", class: "imported", target: "config-audit", reason: "config audit log" },
  { pattern: "tui/last-session.json", class: "imported", target: "tui-last-session", reason: "TUI last-session pointer" },
  { pattern: "commitments.json", class: "imported", target: "commitments", reason: "commitments" },
  { pattern: "gateway-instance-id", class: "imported", target: "gateway-instance-id", reason: "gateway instance id" },
  { pattern: "settings/tts.json", class: "imported", target: "tts-settings", reason: "TTS preferences" },
  { pattern: "audit/*.jsonl", class: "imported", target: "audit-log", reason: "audit log (crestodian.jsonl, file-transfer.jsonl)" },
  { pattern: "plugins/installs.json", class: "imported", target: "plugin-installs", reason: "installed plugin index" },
  { pattern: "workspace*/.openclaw/workspace-state.json", class: "imported", target: "workspace-state", reason: "workspace setup marker" },
  { pattern: "agent", match: "dir", class: "imported", target: "legacy-agent-dir", reason: "pre-multi-agent agent dir: `doctor --fix` moves it into agents/main/agent/, then imports its files" },

  // --- Core legacy state the design names, no importer here yet ---
  { pattern: "**/*-allowFrom.json", class: "imported", target: "channel-allow-from", reason: `channel allowFrom list (access control) (→ channel_pairing_allow_entries)` },
  { pattern: "**/*-pairing.json", class: "imported", target: "channel-pairing", reason: `channel pairing requests (→ channel_pairing_requests)` },
  { pattern: "node.json", class: "imported", target: "node-host-config", reason: `node host config (→ node_host_config)` },
  { pattern: "push/web-push-subscriptions.json", class: "imported", target: "web-push-subscriptions", reason: `web push subscriptions (→ web_push_subscriptions)` },
  { pattern: "push/vapid-keys.json", class: "imported", target: "web-push-vapid-keys", reason: `web push VAPID keys (→ web_push_vapid_keys)` },
  { pattern: "push/apns-registrations.json", class: "imported", target: "apns-registrations", reason: `APNs registrations (→ apns_registrations)` },
  { pattern: "media", match: "dir", class: "imported", target: "media", reason: `legacy media files (→ media_blobs)` },
  { pattern: "acp/event-ledger.json", class: "imported", target: "acp-event-ledger", reason: `ACP replay ledger (→ acp_replay_sessions, acp_replay_events)` },
  { pattern: "settings/voicewake.json", class: "imported", target: "voicewake-triggers", reason: `Voice Wake triggers (→ voicewake_triggers)` },
  { pattern: "settings/voicewake-routing.json", class: "imported", target: "voicewake-routing", reason: `Voice Wake routing (→ voicewake_routing_config, voicewake_routing_routes)` },
  { pattern: "**/plugin-binding-approvals.json", class: "imported", target: "plugin-binding-approvals", reason: `plugin binding approvals (→ plugin_binding_approvals)` },
  { pattern: "restart-sentinel.json", class: "imported", target: "restart-sentinel", reason: `gateway restart sentinel (→ gateway_restart_sentinel)` },
  { pattern: "gateway-restart-intent.json", class: "core", target: "gateway_restart_intent", reason: `gateway restart intent` },
  { pattern: "gateway-supervisor-restart-handoff.json", class: "core", target: "gateway_restart_handoff", reason: `gateway supervisor restart handoff` },
  { pattern: "acpx/process-leases.json", class: "imported", target: "acpx-process-leases", reason: `ACPX process leases (→ plugin_state_entries acpx/process-leases)` },
  // Named only to say why: the ACPX runtime and its importer read the leases at acpx/ of the state root alone.
  { pattern: "**/process-leases.json", class: "unknown", reason: "not the ACPX process leases the importer reads (only acpx/process-leases.json at the state root): left alone" },
  { pattern: "**/device-pair-notify.json", class: "core", target: "plugin_state_entries (device pairing notifications)", reason: `device pairing notification subscribers` },
  { pattern: "crestodian/rescue-pending", match: "dir", class: "core", target: "plugin_state_entries (Crestodian rescue approvals)", reason: `pending Crestodian rescue approvals` },
  { pattern: "plugins/phone-control/armed.json", class: "core", target: "plugin_state_entries phone-control/arm-state", reason: `Phone Control arm state` },
  { pattern: "**/.clawhub/lock.json", class: "core", target: "plugin_state_entries (ClawHub skill installs)", reason: `ClawHub install sidecar` },
  { pattern: "**/.clawhub/origin.json", class: "core", target: "plugin_state_entries (ClawHub skill installs)", reason: `ClawHub origin sidecar` },
  { pattern: "debug-proxy/capture.sqlite", class: "core", target: "capture_sessions, capture_events, capture_blobs", reason: `debug proxy capture database` },
  { pattern: "debug-proxy/blobs", match: "dir", class: "core", target: "capture_blobs", reason: `debug proxy payload blobs` },

  // --- Owned by plugins' (or companion apps') own migrations ---
  { pattern: "credentials/matrix", match: "dir", class: "plugin", owner: "Matrix", reason: pluginMigration("Matrix", "plugin state (credentials)") },
  { pattern: "**/matrix", match: "dir", class: "plugin", owner: "Matrix", reason: pluginMigration("Matrix", "plugin state/blobs") },
  { pattern: "**/bot-storage.json", class: "plugin", owner: "Matrix", reason: pluginMigration("Matrix", "matrix/sync-store") },
  { pattern: "**/sync-store.json", class: "plugin", owner: "Matrix", reason: pluginMigration("Matrix", "matrix/sync-store") },
  { pattern: "**/storage-meta.json", class: "plugin", owner: "Matrix", reason: pluginMigration("Matrix", "matrix/storage-meta") },
  { pattern: "**/inbound-dedupe.json", class: "plugin", owner: "Matrix", reason: pluginMigration("Matrix", "matrix/inbound-dedupe") },
  { pattern: "**/startup-verification.json", class: "plugin", owner: "Matrix", reason: pluginMigration("Matrix", "matrix/startup-verification") },
  { pattern: "**/crypto-idb-snapshot.json", class: "plugin", owner: "Matrix", reason: pluginMigration("Matrix", "matrix/idb-snapshots") },
  { pattern: "**/recovery-key.json", class: "plugin", owner: "Matrix", reason: pluginMigration("Matrix", "matrix/recovery-key") },
  { pattern: "**/legacy-crypto-migration.json", class: "plugin", owner: "Matrix", reason: pluginMigration("Matrix", "plugin state") },
  { pattern: "**/telegram", match: "dir", class: "plugin", owner: "Telegram", reason: pluginMigration("Telegram", "telegram/* plugin state") },
  { pattern: "**/update-offset-*.json", class: "plugin", owner: "Telegram", reason: pluginMigration("Telegram", "telegram/update-offsets") },
  { pattern: "**/sticker-cache.json", class: "plugin", owner: "Telegram", reason: pluginMigration("Telegram", "telegram/sticker-cache") },
  { pattern: "**/*.telegram-messages.json", class: "plugin", owner: "Telegram", reason: pluginMigration("Telegram", "telegram/message-cache") },
  { pattern: "**/*.telegram-sent-messages.json", class: "plugin", owner: "Telegram", reason: pluginMigration("Telegram", "telegram/sent-messages") },
  { pattern: "**/*.telegram-topic-names.json", class: "plugin", owner: "Telegram", reason: pluginMigration("Telegram", "telegram/topic-names") },
  { pattern: "**/thread-bindings-*.json", class: "plugin", owner: "Telegram", reason: pluginMigration("Telegram", "telegram/thread-bindings") },
  { pattern: "**/discord", match: "dir", class: "plugin", owner: "Discord", reason: pluginMigration("Discord", "discord/* plugin state") },
  { pattern: "**/model-picker-preferences.json", class: "plugin", owner: "Discord", reason: pluginMigration("Discord", "discord/model-picker-preferences") },
  { pattern: "**/command-deploy-cache.json", class: "plugin", owner: "Discord", reason: pluginMigration("Discord", "discord/command-deploy-hashes") },
  { pattern: "**/thread-bindings.json", class: "plugin", owner: "Matrix or Discord", reason: pluginMigration("Matrix or Discord", "its thread-bindings namespace") },
  { pattern: "**/imessage", match: "dir", class: "plugin", owner: "iMessage", reason: pluginMigration("iMessage", "imessage/* plugin state") },
  { pattern: "**/reply-cache.jsonl", class: "plugin", owner: "iMessage", reason: pluginMigration("iMessage", "imessage/reply-cache") },
  { pattern: "**/sent-echoes.jsonl", class: "plugin", owner: "iMessage", reason: pluginMigration("iMessage", "imessage/sent-echoes") },
  { pattern: "**/bluebubbles", match: "dir", class: "plugin", owner: "BlueBubbles", reason: pluginMigration("BlueBubbles", "bluebubbles/* plugin state") },
  { pattern: "**/msteams", match: "dir", class: "plugin", owner: "Microsoft Teams", reason: pluginMigration("Microsoft Teams", "msteams plugin state") },
  { pattern: "**/msteams-conversations.json", class: "plugin", owner: "Microsoft Teams", reason: pluginMigration("Microsoft Teams", "conversations") },
  { pattern: "**/msteams-polls.json", class: "plugin", owner: "Microsoft Teams", reason: pluginMigration("Microsoft Teams", "polls") },
  { pattern: "**/msteams-sso-tokens.json", class: "plugin", owner: "Microsoft Teams", reason: pluginMigration("Microsoft Teams", "sso-tokens") },
  { pattern: "**/*.learnings.json", class: "plugin", owner: "Microsoft Teams", reason: pluginMigration("Microsoft Teams", "feedback-learnings") },
  { pattern: "**/nostr", match: "dir", class: "plugin", owner: "Nostr", reason: pluginMigration("Nostr", "nostr/* plugin state") },
  { pattern: "**/bus-state-*.json", class: "plugin", owner: "Nostr", reason: pluginMigration("Nostr", "nostr/bus-state") },
  { pattern: "**/profile-state-*.json", class: "plugin", owner: "Nostr", reason: pluginMigration("Nostr", "nostr/profile-state") },
  { pattern: "**/feishu", match: "dir", class: "plugin", owner: "Feishu", reason: pluginMigration("Feishu", "feishu dedup state") },
  { pattern: "**/qqbot/data/credential-backup*.json", class: "plugin", owner: "QQBot", reason: pluginMigration("QQBot", "qqbot/credential-backups") },
  { pattern: "**/qqbot", match: "dir", class: "discard", owner: "QQBot", reason: "QQBot gateway sessions, known users and ref-index caches: the design does not migrate them" },
  { pattern: "**/known-users.json", class: "discard", owner: "QQBot", reason: "QQBot known-users cache: the design does not migrate it" },
  { pattern: "**/ref-index.jsonl", class: "discard", owner: "QQBot", reason: "QQBot quote ref-index cache: the design does not migrate it" },
  { pattern: "**/calls.jsonl", class: "plugin", owner: "voice-call", reason: pluginMigration("voice-call", "voice-call/calls") },
  { pattern: "**/.openclaw-wiki", match: "dir", class: "plugin", owner: "Memory Wiki", reason: pluginMigration("Memory Wiki", "plugin state/blobs (log, source-sync, import-runs, digests)") },
  { pattern: "**/.dreams/short-term-promotion.lock", class: "discard", owner: "memory-core", reason: "memory-core promotion lock (a lease row now)" },
  { pattern: "**/.dreams", match: "dir", class: "plugin", owner: "memory-core", reason: pluginMigration("memory-core", "plugin state (events, session corpus, recall, phase signals)") },
  { pattern: "**/session-toggles.json", class: "plugin", owner: "Active Memory", reason: pluginMigration("Active Memory", "active-memory/session-toggles") },
  { pattern: "skill-workshop", match: "dir", class: "plugin", owner: "Skill Workshop", reason: pluginMigration("Skill Workshop", "skill-workshop/proposals, skill-workshop/reviews") },
  { pattern: "canvas/documents", match: "dir", class: "plugin", owner: "Canvas", reason: pluginMigration("Canvas", "plugin blobs (managed documents)") },
  { pattern: "state/canvas", match: "dir", class: "plugin", owner: "Canvas", reason: pluginMigration("Canvas", "plugin blobs (managed documents)") },
  { pattern: "memory/lancedb", match: "dir", class: "plugin", owner: "memory-lancedb", reason: "implicit LanceDB store the memory-lancedb plugin no longer opens by default: configure its dbPath to keep using it" },
  { pattern: "**/port-guard.json", class: "plugin", owner: "macOS app", reason: "macOS port guardian records: the companion app moves them to macos_port_guardian_records" },

  // --- Caches, locks, temp files and never-shipped sidecars ---
  { pattern: "plugin-state/state.sqlite*", class: "discard", reason: never },
  { pattern: "tasks/runs.sqlite*", class: "discard", reason: never },
  { pattern: "tasks/flows/registry.sqlite*", class: "discard", reason: never },
  { pattern: "**/openclaw-state.sqlite*", class: "discard", reason: never },
  { pattern: "memory/*.sqlite*", class: "discard", reason: "memory index sidecar: the index lives in the agent database and is rebuilt from the memory files" },
  { pattern: "agents/*/qmd", match: "dir", class: "discard", reason: "QMD index sidecar: now a temporary materialization of plugin blobs" },
  { pattern: "cache", match: "dir", class: "discard", reason: cache },
  { pattern: "**/openrouter-models.json", class: "discard", reason: `${cache} (model_capability_cache)` },
  { pattern: "**/github-copilot.token.json", class: "discard", reason: `${cache} (GitHub Copilot token exchange)` },
  { pattern: "completions", match: "dir", class: "discard", reason: "shell completion cache: generated on demand now" },
  { pattern: "logs/stability", match: "dir", class: "discard", reason: "old diagnostics bundles: the gateway stores stability bundles in SQLite now" },
  { pattern: "**/raw-openai-completions.jsonl", class: "discard", reason: "old raw-stream diagnostics log (OPENCLAW_RAW_STREAM writes SQLite rows now)" },
  { pattern: "logs/commands.log", class: "discard", reason: "old command-logger text log (command_log_entries now); not imported, delete it when no longer needed" },
  { pattern: "**/gateway.*.lock", class: "discard", reason: "file-era gateway singleton lock (state_leases now)" },
  { pattern: "**/qmd/embed.lock", class: "discard", reason: "file-era QMD embed lock (a lease row now)" },
  { pattern: "**/.openclaw-profile-decorated", class: "discard", reason: "browser profile decoration marker" },
  { pattern: "**/.openclaw/attachments", match: "dir", class: "discard", reason: "materialized subagent attachments (VFS seed entries now)" },
  { pattern: "**/*.tmp-*", class: "discard", reason: "temporary file left by an interrupted write" },

  // --- Current state ---
  { pattern: "state/openclaw.sqlite", class: "current", reason: "global database" },
  { pattern: "state/openclaw.sqlite-wal", class: "current", reason: "global database WAL" },
  { pattern: "state/openclaw.sqlite-shm", class: "current", reason: "global database shared memory" },
  { pattern: "state/openclaw.sqlite-journal", class: "current", reason: "global database journal" },
  { pattern: "agents/*/agent/openclaw-agent.sqlite", class: "current", reason: "agent database" },
  { pattern: "agents/*/agent/openclaw-agent.sqlite-wal", class: "current", reason: "agent database WAL" },
  { pattern: "agents/*/agent/openclaw-agent.sqlite-shm", class: "current", reason: "agent database shared memory" },
  { pattern: "agents/*/agent/openclaw-agent.sqlite-journal", class: "current", reason: "agent database journal" },
  { pattern: "openclaw.json", class: "current", reason: "config (stays file-based)" },
  { pattern: "openclaw.json.*", class: "current", reason: "config recovery snapshot (kept beside the config)" },
  { pattern: ".env", class: "current", reason: "environment file" },
  { pattern: "exec-approvals.sock", class: "current", reason: "exec-approval prompt socket (IPC, not state)", allowSpecial: true },
  { pattern: "credentials", match: "dir", class: "current", descend: "all", reason: "credentials dir: provider and CLI credential files stay file-based" },
  { pattern: "workspace", match: "dir", class: "current", descend: WORKSPACE_LEGACY_DIRS, reason: "agent workspace (user files)" },
  { pattern: "workspace-*", match: "dir", class: "current", descend: WORKSPACE_LEGACY_DIRS, reason: "agent workspace (user files)" },
  { pattern: "sandboxes", match: "dir", class: "current", reason: "sandbox workspaces (user files)" },
  { pattern: "extensions", match: "dir", class: "current", reason: "installed plugin packages" },
  { pattern: "browser", match: "dir", class: "current", reason: "browser profiles" },
  { pattern: "migrated", match: "dir", class: "current", reason: "legacy files retired by earlier migrations" },
  { pattern: "logs", match: "dir", class: "current", descend: "all", reason: "operator logs (stay file-based)" },
  { pattern: "debug-proxy", match: "dir", class: "current", descend: "all", reason: "debug proxy CA certificates (kept)" },
  { pattern: "**/*.pre-restore-*", match: "dir", class: "current", reason: "previous copy kept by a restore (the restore check reports it)" },
];

/** Segment matcher for one glob segment (`*` inside a segment), compiled once. */
function segmentRegex(segment: string): RegExp {
  const escaped = segment.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*");
  return new RegExp(`^${escaped}$`);
}

interface CompiledRule {
  rule: LegacyPathRule;
  segments: Array<RegExp | "**">;
  /** The last segment: tested on the name first, which rejects almost every rule at once. */
  last: RegExp | null;
}

const COMPILED: readonly CompiledRule[] = LEGACY_PATH_RULES.map((rule) => {
  const segments = rule.pattern.split("/").map((s) => (s === "**" ? ("**" as const) : segmentRegex(s)));
  const tail = segments[segments.length - 1]!;
  return { rule, segments, last: tail === "**" ? null : tail };
});

function matchSegments(pattern: ReadonlyArray<RegExp | "**">, parts: readonly string[], pi = 0, si = 0): boolean {
  if (pi === pattern.length) return si === parts.length;
  const p = pattern[pi]!;
  if (p === "**") {
    for (let k = si; k <= parts.length; k += 1) if (matchSegments(pattern, parts, pi + 1, k)) return true;
    return false;
  }
  return si < parts.length && p.test(parts[si]!) && matchSegments(pattern, parts, pi + 1, si + 1);
}

/** The first rule naming `relativePath` as a file (`match: "file"`) or a directory (`"dir"`). */
export function matchLegacyRule(relativePath: string, as: "file" | "dir"): LegacyPathRule | null {
  const parts = relativePath.split("/");
  const name = parts[parts.length - 1]!;
  for (const c of COMPILED) {
    if ((c.rule.match ?? "file") !== as) continue;
    if (c.last && !c.last.test(name)) continue;
    if (matchSegments(c.segments, parts)) return c.rule;
  }
  return null;
}

/** True when a file rule could match something below `relativeDir` (the dir is on a legacy file's path). */
export function isOnLegacyPath(relativeDir: string): LegacyPathRule | null {
  const parts = relativeDir.split("/");
  for (const c of COMPILED) {
    if (c.rule.class === "current") continue;
    // A prefix of the pattern (without its last segment) that matches the directory.
    for (let n = 1; n < c.segments.length; n += 1) {
      const prefix = c.segments.slice(0, n);
      if (prefix[prefix.length - 1] === "**") continue;
      if (matchSegments(prefix, parts)) return c.rule;
    }
    if ((c.rule.match ?? "file") === "dir" && matchSegments(c.segments, parts)) return c.rule;
  }
  return null;
}

/** Transcript-dir names that are not transcripts (trajectory and ACP-stream sidecars). */
export function isTranscriptSidecar(name: string): boolean {
  return SIDECAR_SUFFIXES.some((suffix) => name.endsWith(suffix));
}

/**
 * File names the runtime must never read or write again (the seed's static ban list, distinctive names only).
 * Matched per path component: `*` stands for any characters.
 */
export const BANNED_RUNTIME_NAMES: readonly string[] = [
  "sessions.json",
  "*.trajectory.jsonl",
  "*.acp-stream.jsonl",
  "event-ledger.json",
  "auth.json",
  "models.json",
  "oauth.json",
  "github-copilot.token.json",
  "openrouter-models.json",
  "auth-profiles.json",
  "auth-state.json",
  "exec-approvals.json",
  "workspace-state.json",
  "recovery-key.json",
  "jobs.json",
  "jobs-state.json",
  "device-pair-notify.json",
  "pending.json",
  "paired.json",
  "bootstrap.json",
  "device.json",
  "device-auth.json",
  "web-push-subscriptions.json",
  "vapid-keys.json",
  "apns-registrations.json",
  "process-leases.json",
  "gateway-instance-id",
  "session-toggles.json",
  "events.jsonl",
  "daily-ingestion.json",
  "session-ingestion.json",
  "short-term-recall.json",
  "phase-signals.json",
  "short-term-promotion.lock",
  "skill-workshop-review-*.json",
  "bus-state-*.json",
  "profile-state-*.json",
  "calls.jsonl",
  "known-users.json",
  "ref-index.jsonl",
  "update-offset-*.json",
  "sticker-cache.json",
  "*.telegram-messages.json",
  "*.telegram-sent-messages.json",
  "*.telegram-topic-names.json",
  "thread-bindings-*.json",
  "thread-bindings.json",
  "reply-cache.jsonl",
  "sent-echoes.jsonl",
  "msteams-conversations.json",
  "msteams-polls.json",
  "msteams-sso-tokens.json",
  "*.learnings.json",
  "bot-storage.json",
  "sync-store.json",
  "inbound-dedupe.json",
  "startup-verification.json",
  "storage-meta.json",
  "crypto-idb-snapshot.json",
  "model-picker-preferences.json",
  "command-deploy-cache.json",
  "current-conversations.json",
  "restart-sentinel.json",
  "gateway-restart-intent.json",
  "gateway-supervisor-restart-handoff.json",
  "gateway.*.lock",
  "embed.lock",
  "commands.log",
  "config-health.json",
  "port-guard.json",
  "voicewake.json",
  "voicewake-routing.json",
  "plugin-binding-approvals.json",
  "installs.json",
  "file-transfer.jsonl",
  "crestodian.jsonl",
  "armed.json",
  "source-sync.json",
  "agent-digest.json",
  "claims.jsonl",
  ".openclaw-profile-decorated",
  "*-allowFrom.json",
  "node.json",
  "tts.json",
  "update-check.json",
  "commitments.json",
  "config-audit.jsonl",
  "last-session.json",
];
