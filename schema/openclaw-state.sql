-- Global control-plane database (<stateDir>/state/openclaw.sqlite), schema v1.
-- Single source of truth: the Kysely DB types and DDL constants in src/ are generated
-- from this file by `npm run db:gen`; edit here, never the generated output.

-- ---------------------------------------------------------------------------
-- Database identity and agent registry
-- ---------------------------------------------------------------------------

-- One row (meta_key = 'primary') lets tools and backups tell a global DB from an
-- agent DB without trusting the file name.
CREATE TABLE schema_meta (
  meta_key TEXT NOT NULL PRIMARY KEY,
  role TEXT NOT NULL CHECK (role IN ('global', 'agent')),
  schema_version INTEGER NOT NULL,
  agent_id TEXT,
  app_version TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Code asks this registry for agent DB paths instead of guessing them.
CREATE TABLE agent_databases (
  agent_id TEXT NOT NULL PRIMARY KEY,
  path TEXT NOT NULL,
  schema_version INTEGER,
  last_seen_at INTEGER,
  size_bytes INTEGER
);

-- ---------------------------------------------------------------------------
-- Coordination and tool bookkeeping
-- ---------------------------------------------------------------------------

-- Mutation lock shared with the gateway; an expired row may be taken over.
CREATE TABLE state_leases (
  scope TEXT NOT NULL,
  lease_key TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  heartbeat_at INTEGER,
  payload_json TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (scope, lease_key)
);
CREATE INDEX state_leases_expires_at_idx ON state_leases (expires_at);

-- 'running' exists so a crashed run is visible rather than silently absent.
CREATE TABLE migration_runs (
  id TEXT NOT NULL PRIMARY KEY,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'warning', 'failed')),
  report_json TEXT
);
CREATE INDEX migration_runs_started_at_idx ON migration_runs (started_at DESC);

-- Per-source ledger, committed in the same transaction as the imported rows, so it
-- is the idempotency record for re-runs; pruning a run prunes its ledger.
CREATE TABLE migration_sources (
  source_key TEXT NOT NULL PRIMARY KEY,
  migration_kind TEXT NOT NULL,
  source_path TEXT NOT NULL,
  target_table TEXT,
  source_sha256 TEXT,
  source_size_bytes INTEGER,
  source_record_count INTEGER,
  last_run_id TEXT NOT NULL REFERENCES migration_runs (id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  imported_at INTEGER,
  removed_source INTEGER NOT NULL DEFAULT 0 CHECK (removed_source IN (0, 1)),
  report_json TEXT
);
CREATE INDEX migration_sources_last_run_id_idx ON migration_sources (last_run_id);
CREATE INDEX migration_sources_source_path_idx ON migration_sources (source_path);

-- Failed backups are recorded too, so `backup list` explains gaps in rotation.
CREATE TABLE backup_runs (
  id TEXT NOT NULL PRIMARY KEY,
  created_at INTEGER NOT NULL,
  archive_path TEXT,
  status TEXT NOT NULL CHECK (status IN ('completed', 'failed', 'running')),
  manifest_json TEXT
);
CREATE INDEX backup_runs_created_at_idx ON backup_runs (created_at);

-- ---------------------------------------------------------------------------
-- Tasks, flows and subagents
-- ---------------------------------------------------------------------------

-- The seed names these tables without columns: keep hot fields typed and the rest
-- in payload_json until a real owner defines more.
CREATE TABLE task_runs (
  task_id TEXT NOT NULL PRIMARY KEY,
  kind TEXT,
  status TEXT NOT NULL,
  session_key TEXT,
  agent_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  payload_json TEXT
);
CREATE INDEX task_runs_status_idx ON task_runs (status);
CREATE INDEX task_runs_session_key_idx ON task_runs (session_key);
CREATE INDEX task_runs_updated_at_idx ON task_runs (updated_at);

-- Delivery state has no meaning without its task, hence the cascade.
CREATE TABLE task_delivery_state (
  task_id TEXT NOT NULL PRIMARY KEY REFERENCES task_runs (task_id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  updated_at INTEGER NOT NULL,
  payload_json TEXT
);
CREATE INDEX task_delivery_state_status_idx ON task_delivery_state (status);

CREATE TABLE flow_runs (
  flow_id TEXT NOT NULL PRIMARY KEY,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  payload_json TEXT
);
CREATE INDEX flow_runs_status_idx ON flow_runs (status);
CREATE INDEX flow_runs_updated_at_idx ON flow_runs (updated_at);

-- payload_json is a replay/debug copy; the typed columns are what lookups use.
CREATE TABLE subagent_runs (
  run_id TEXT NOT NULL PRIMARY KEY,
  child_session_key TEXT,
  requester_session_key TEXT,
  controller_session_key TEXT,
  created_at INTEGER,
  ended_at INTEGER,
  cleanup_handled INTEGER NOT NULL DEFAULT 0 CHECK (cleanup_handled IN (0, 1)),
  payload_json TEXT
);
CREATE INDEX subagent_runs_child_session_key_idx ON subagent_runs (child_session_key);
CREATE INDEX subagent_runs_requester_session_key_idx ON subagent_runs (requester_session_key);
CREATE INDEX subagent_runs_created_at_idx ON subagent_runs (created_at);

-- ---------------------------------------------------------------------------
-- Cron
-- ---------------------------------------------------------------------------

-- Typed columns come from the normalized job; job_json/state_json keep the full
-- payload for replay and debugging. Booleans stay nullable where legacy jobs omit them.
CREATE TABLE cron_jobs (
  store_key TEXT NOT NULL,
  job_id TEXT NOT NULL,
  name TEXT,
  description TEXT,
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  delete_after_run INTEGER CHECK (delete_after_run IN (0, 1)),
  created_at_ms INTEGER,
  agent_id TEXT,
  session_key TEXT,
  schedule_kind TEXT,
  schedule_expr TEXT,
  schedule_tz TEXT,
  every_ms INTEGER,
  anchor_ms INTEGER,
  at TEXT,
  stagger_ms INTEGER,
  session_target TEXT,
  wake_mode TEXT,
  payload_kind TEXT,
  payload_message TEXT,
  payload_model TEXT,
  payload_fallbacks_json TEXT,
  payload_thinking TEXT,
  payload_timeout_seconds INTEGER,
  payload_allow_unsafe_external_content INTEGER CHECK (payload_allow_unsafe_external_content IN (0, 1)),
  payload_external_content_source_json TEXT,
  payload_light_context INTEGER CHECK (payload_light_context IN (0, 1)),
  payload_tools_allow_json TEXT,
  delivery_mode TEXT,
  delivery_channel TEXT,
  delivery_to TEXT,
  delivery_thread_id TEXT,
  delivery_account_id TEXT,
  delivery_best_effort INTEGER CHECK (delivery_best_effort IN (0, 1)),
  failure_delivery_mode TEXT,
  failure_delivery_channel TEXT,
  failure_delivery_to TEXT,
  failure_delivery_account_id TEXT,
  failure_alert_disabled INTEGER CHECK (failure_alert_disabled IN (0, 1)),
  failure_alert_after INTEGER,
  failure_alert_channel TEXT,
  failure_alert_to TEXT,
  failure_alert_cooldown_ms INTEGER,
  failure_alert_include_skipped INTEGER CHECK (failure_alert_include_skipped IN (0, 1)),
  failure_alert_mode TEXT,
  failure_alert_account_id TEXT,
  next_run_at_ms INTEGER,
  running_at_ms INTEGER,
  last_run_at_ms INTEGER,
  last_run_status TEXT,
  last_error TEXT,
  last_duration_ms INTEGER,
  consecutive_errors INTEGER,
  consecutive_skipped INTEGER,
  schedule_error_count INTEGER,
  last_delivery_status TEXT,
  last_delivery_error TEXT,
  last_delivered INTEGER CHECK (last_delivered IN (0, 1)),
  last_failure_alert_at_ms INTEGER,
  job_json TEXT NOT NULL CHECK (json_valid(job_json)),
  state_json TEXT,
  runtime_updated_at_ms INTEGER,
  schedule_identity TEXT,
  sort_order INTEGER,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (store_key, job_id)
);
CREATE INDEX cron_jobs_store_key_sort_order_idx ON cron_jobs (store_key, sort_order);
CREATE INDEX cron_jobs_next_run_at_ms_idx ON cron_jobs (next_run_at_ms);

-- seq preserves the order of lines in the legacy runs/<jobId>.jsonl file.
CREATE TABLE cron_run_logs (
  store_key TEXT NOT NULL,
  job_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  ts INTEGER,
  status TEXT,
  error TEXT,
  summary TEXT,
  diagnostics_summary TEXT,
  delivery_status TEXT,
  delivery_error TEXT,
  delivered INTEGER CHECK (delivered IN (0, 1)),
  session_id TEXT,
  session_key TEXT,
  run_id TEXT,
  run_at_ms INTEGER,
  duration_ms INTEGER,
  next_run_at_ms INTEGER,
  model TEXT,
  provider TEXT,
  total_tokens INTEGER,
  entry_json TEXT NOT NULL CHECK (json_valid(entry_json)),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (store_key, job_id, seq)
);
CREATE INDEX cron_run_logs_store_key_job_id_ts_idx ON cron_run_logs (store_key, job_id, ts);

-- ---------------------------------------------------------------------------
-- Delivery, bindings and commitments
-- ---------------------------------------------------------------------------

-- Queue names: 'outbound-delivery', 'session-delivery'. Failed entries stay in the
-- same table with a status, replacing the legacy failed/ folder.
CREATE TABLE delivery_queue_entries (
  queue_name TEXT NOT NULL,
  id TEXT NOT NULL,
  status TEXT NOT NULL,
  entry_kind TEXT,
  session_key TEXT,
  channel TEXT,
  target TEXT,
  account_id TEXT,
  retry_count INTEGER NOT NULL DEFAULT 0,
  last_attempt_at INTEGER,
  last_error TEXT,
  recovery_state TEXT,
  platform_send_started_at INTEGER,
  entry_json TEXT NOT NULL CHECK (json_valid(entry_json)),
  enqueued_at INTEGER,
  updated_at INTEGER NOT NULL,
  failed_at INTEGER,
  PRIMARY KEY (queue_name, id)
);
CREATE INDEX delivery_queue_entries_queue_name_status_idx ON delivery_queue_entries (queue_name, status);
CREATE INDEX delivery_queue_entries_queue_name_enqueued_at_idx ON delivery_queue_entries (queue_name, enqueued_at);

CREATE TABLE current_conversation_bindings (
  binding_key TEXT NOT NULL PRIMARY KEY,
  binding_id TEXT,
  target_agent_id TEXT,
  target_session_id TEXT,
  target_session_key TEXT,
  channel TEXT,
  account_id TEXT,
  conversation_kind TEXT,
  parent_conversation_id TEXT,
  conversation_id TEXT,
  target_kind TEXT,
  status TEXT,
  bound_at INTEGER,
  expires_at INTEGER,
  metadata_json TEXT,
  updated_at INTEGER NOT NULL
);
CREATE INDEX current_conversation_bindings_target_session_key_idx ON current_conversation_bindings (target_session_key);
CREATE INDEX current_conversation_bindings_expires_at_idx ON current_conversation_bindings (expires_at);

-- record_json is a replay/debug copy; typed columns drive scheduling and dedupe.
CREATE TABLE commitments (
  id TEXT NOT NULL PRIMARY KEY,
  agent_id TEXT,
  session_key TEXT,
  channel TEXT,
  account_id TEXT,
  recipient_id TEXT,
  thread_id TEXT,
  sender_id TEXT,
  kind TEXT,
  sensitivity TEXT,
  source TEXT,
  status TEXT,
  reason TEXT,
  suggested_text TEXT,
  dedupe_key TEXT,
  confidence REAL,
  due_earliest_ms INTEGER,
  due_latest_ms INTEGER,
  due_timezone TEXT,
  source_message_id TEXT,
  source_run_id TEXT,
  created_at_ms INTEGER,
  updated_at_ms INTEGER NOT NULL,
  attempts INTEGER,
  last_attempt_at_ms INTEGER,
  sent_at_ms INTEGER,
  dismissed_at_ms INTEGER,
  snoozed_until_ms INTEGER,
  expired_at_ms INTEGER,
  record_json TEXT
);
CREATE INDEX commitments_status_due_earliest_ms_idx ON commitments (status, due_earliest_ms);
CREATE INDEX commitments_agent_id_session_key_idx ON commitments (agent_id, session_key);
CREATE INDEX commitments_dedupe_key_idx ON commitments (dedupe_key);
CREATE INDEX commitments_updated_at_ms_idx ON commitments (updated_at_ms);

-- ---------------------------------------------------------------------------
-- Plugin-owned state (opaque to the host; no generic host kv table exists)
-- ---------------------------------------------------------------------------

CREATE TABLE plugin_state_entries (
  plugin_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  entry_key TEXT NOT NULL,
  value_json TEXT NOT NULL CHECK (json_valid(value_json)),
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  PRIMARY KEY (plugin_id, namespace, entry_key)
);
CREATE INDEX plugin_state_entries_expires_at_idx ON plugin_state_entries (expires_at);

-- Bytes go in a BLOB column, never base64 inside JSON.
CREATE TABLE plugin_blob_entries (
  plugin_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  entry_key TEXT NOT NULL,
  metadata_json TEXT,
  blob BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  PRIMARY KEY (plugin_id, namespace, entry_key)
);
CREATE INDEX plugin_blob_entries_expires_at_idx ON plugin_blob_entries (expires_at);

-- Host-owned orchestration state about plugins, so it gets a typed table.
CREATE TABLE plugin_binding_approvals (
  plugin_root TEXT NOT NULL,
  channel TEXT NOT NULL,
  account_id TEXT NOT NULL,
  plugin_id TEXT,
  plugin_name TEXT,
  approved_at INTEGER,
  PRIMARY KEY (plugin_root, channel, account_id)
);

-- ---------------------------------------------------------------------------
-- Media and uploads
-- ---------------------------------------------------------------------------

-- Canonical store for gateway media bytes; files on disk are temporary copies.
CREATE TABLE media_blobs (
  subdir TEXT NOT NULL,
  id TEXT NOT NULL,
  content_type TEXT,
  size_bytes INTEGER NOT NULL,
  blob BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (subdir, id)
);
CREATE INDEX media_blobs_created_at_idx ON media_blobs (created_at);

-- Bytes stay in media_blobs; this row only describes the outgoing attachment.
CREATE TABLE managed_outgoing_image_records (
  attachment_id TEXT NOT NULL PRIMARY KEY,
  session_key TEXT,
  message_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  retention_class TEXT,
  alt TEXT,
  original_media_id TEXT,
  original_media_subdir TEXT,
  original_content_type TEXT,
  original_width INTEGER,
  original_height INTEGER,
  original_size_bytes INTEGER,
  original_filename TEXT,
  record_json TEXT
);
CREATE INDEX managed_outgoing_image_records_session_key_idx ON managed_outgoing_image_records (session_key);
CREATE INDEX managed_outgoing_image_records_created_at_idx ON managed_outgoing_image_records (created_at);

CREATE TABLE skill_uploads (
  upload_id TEXT NOT NULL PRIMARY KEY,
  kind TEXT,
  slug TEXT,
  force INTEGER CHECK (force IN (0, 1)),
  size_bytes INTEGER,
  sha256 TEXT,
  actual_sha256 TEXT,
  received_bytes INTEGER,
  archive_blob BLOB,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  committed INTEGER NOT NULL DEFAULT 0 CHECK (committed IN (0, 1)),
  committed_at INTEGER,
  idempotency_key_hash TEXT
);
CREATE INDEX skill_uploads_expires_at_idx ON skill_uploads (expires_at);
CREATE INDEX skill_uploads_idempotency_key_hash_idx ON skill_uploads (idempotency_key_hash);

-- ---------------------------------------------------------------------------
-- Auth, identity and pairing (secrets: never logged, never in reports)
-- ---------------------------------------------------------------------------

-- Keyed by agent dir; credentials stay provider-shaped JSON payloads.
CREATE TABLE auth_profile_stores (
  store_key TEXT NOT NULL PRIMARY KEY,
  agent_dir TEXT NOT NULL,
  source_kind TEXT,
  profiles_json TEXT,
  updated_at INTEGER NOT NULL
);

CREATE TABLE auth_profile_state (
  store_key TEXT NOT NULL PRIMARY KEY,
  agent_dir TEXT NOT NULL,
  state_json TEXT,
  updated_at INTEGER NOT NULL
);

CREATE TABLE device_identities (
  identity_key TEXT NOT NULL PRIMARY KEY,
  device_id TEXT NOT NULL,
  public_key_pem TEXT,
  private_key_pem TEXT,
  created_at_ms INTEGER,
  updated_at_ms INTEGER NOT NULL
);

CREATE TABLE device_auth_tokens (
  device_id TEXT NOT NULL,
  role TEXT NOT NULL,
  token TEXT NOT NULL,
  scopes_json TEXT,
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (device_id, role)
);

-- One table for the three legacy lists (devices/{paired,pending,bootstrap}.json) so a
-- device moving between lists is a row update, not a cross-table move.
CREATE TABLE device_pairing_entries (
  list_kind TEXT NOT NULL CHECK (list_kind IN ('paired', 'pending', 'bootstrap')),
  device_id TEXT NOT NULL,
  role TEXT,
  entry_json TEXT NOT NULL CHECK (json_valid(entry_json)),
  created_at_ms INTEGER,
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (list_kind, device_id)
);
CREATE INDEX device_pairing_entries_device_id_idx ON device_pairing_entries (device_id);

CREATE TABLE node_pairing_entries (
  node_id TEXT NOT NULL PRIMARY KEY,
  entry_json TEXT NOT NULL CHECK (json_valid(entry_json)),
  updated_at_ms INTEGER NOT NULL
);

CREATE TABLE channel_pairing_requests (
  channel_key TEXT NOT NULL,
  account_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  code TEXT,
  created_at INTEGER,
  last_seen_at INTEGER,
  meta_json TEXT,
  PRIMARY KEY (channel_key, account_id, request_id)
);
CREATE INDEX channel_pairing_requests_created_at_idx ON channel_pairing_requests (created_at);

-- sort_order keeps the operator's allowlist order from the legacy file.
CREATE TABLE channel_pairing_allow_entries (
  channel_key TEXT NOT NULL,
  account_id TEXT NOT NULL,
  entry TEXT NOT NULL,
  sort_order INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (channel_key, account_id, entry)
);
CREATE INDEX channel_pairing_allow_entries_order_idx ON channel_pairing_allow_entries (channel_key, account_id, sort_order);

-- ---------------------------------------------------------------------------
-- Node host, push and device-side services
-- ---------------------------------------------------------------------------

CREATE TABLE node_host_config (
  config_key TEXT NOT NULL PRIMARY KEY,
  version INTEGER,
  node_id TEXT,
  token TEXT,
  display_name TEXT,
  gateway_host TEXT,
  gateway_port INTEGER,
  gateway_tls INTEGER CHECK (gateway_tls IN (0, 1)),
  gateway_tls_fingerprint TEXT,
  updated_at_ms INTEGER NOT NULL
);

-- Keyed by a hash because raw push endpoints are long URLs that also carry secrets.
CREATE TABLE web_push_subscriptions (
  endpoint_hash TEXT NOT NULL PRIMARY KEY,
  subscription_id TEXT,
  endpoint TEXT NOT NULL,
  p256dh TEXT,
  auth TEXT,
  created_at_ms INTEGER,
  updated_at_ms INTEGER NOT NULL
);
CREATE INDEX web_push_subscriptions_subscription_id_idx ON web_push_subscriptions (subscription_id);

CREATE TABLE web_push_vapid_keys (
  key_id TEXT NOT NULL PRIMARY KEY,
  public_key TEXT NOT NULL,
  private_key TEXT NOT NULL,
  subject TEXT,
  updated_at_ms INTEGER NOT NULL
);

CREATE TABLE apns_registrations (
  node_id TEXT NOT NULL PRIMARY KEY,
  transport TEXT,
  token TEXT,
  relay_handle TEXT,
  send_grant TEXT,
  installation_id TEXT,
  topic TEXT,
  environment TEXT,
  distribution TEXT,
  token_debug_suffix TEXT,
  updated_at_ms INTEGER NOT NULL
);

-- Short-lived bridges; expired rows are swept by expires_at_ms.
CREATE TABLE native_hook_relay_bridges (
  relay_id TEXT NOT NULL PRIMARY KEY,
  pid INTEGER,
  hostname TEXT,
  port INTEGER,
  token TEXT,
  expires_at_ms INTEGER,
  updated_at_ms INTEGER NOT NULL
);
CREATE INDEX native_hook_relay_bridges_expires_at_ms_idx ON native_hook_relay_bridges (expires_at_ms);

-- One process may guard several ports, so the key is the pair.
CREATE TABLE macos_port_guardian_records (
  pid INTEGER NOT NULL,
  port INTEGER NOT NULL,
  command TEXT,
  mode TEXT,
  timestamp INTEGER,
  PRIMARY KEY (pid, port)
);

-- Rows keyed by position keep the user's trigger order.
CREATE TABLE voicewake_triggers (
  config_key TEXT NOT NULL,
  position INTEGER NOT NULL,
  trigger TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (config_key, position)
);

CREATE TABLE voicewake_routing_config (
  config_key TEXT NOT NULL PRIMARY KEY,
  version INTEGER,
  default_target_mode TEXT,
  default_target_agent_id TEXT,
  default_target_session_key TEXT,
  updated_at_ms INTEGER NOT NULL
);

CREATE TABLE voicewake_routing_routes (
  config_key TEXT NOT NULL,
  position INTEGER NOT NULL,
  trigger TEXT,
  target_mode TEXT,
  target_agent_id TEXT,
  target_session_key TEXT,
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (config_key, position)
);

-- ---------------------------------------------------------------------------
-- Gateway, config and workspace housekeeping
-- ---------------------------------------------------------------------------

-- raw_json holds the legacy file text as read; it may be JSON5, so no json_valid check.
CREATE TABLE exec_approvals_config (
  config_key TEXT NOT NULL PRIMARY KEY,
  raw_json TEXT,
  socket_path TEXT,
  has_socket_token INTEGER CHECK (has_socket_token IN (0, 1)),
  default_security TEXT,
  default_ask TEXT,
  default_ask_fallback TEXT,
  auto_allow_skills INTEGER CHECK (auto_allow_skills IN (0, 1)),
  agent_count INTEGER,
  allowlist_count INTEGER,
  updated_at_ms INTEGER NOT NULL
);

-- payload_json is a replay/debug copy; restart logic reads the typed columns.
CREATE TABLE gateway_restart_sentinel (
  sentinel_key TEXT NOT NULL PRIMARY KEY,
  version INTEGER,
  kind TEXT,
  status TEXT,
  ts INTEGER,
  session_key TEXT,
  thread_id TEXT,
  delivery_channel TEXT,
  delivery_to TEXT,
  delivery_account_id TEXT,
  message TEXT,
  continuation_json TEXT,
  doctor_hint TEXT,
  stats_json TEXT,
  payload_json TEXT,
  updated_at_ms INTEGER NOT NULL
);

CREATE TABLE update_check_state (
  state_key TEXT NOT NULL PRIMARY KEY,
  last_checked_at INTEGER,
  last_notified_version TEXT,
  last_notified_tag TEXT,
  last_available_version TEXT,
  last_available_tag TEXT,
  auto_install_id TEXT,
  auto_first_seen_version TEXT,
  auto_first_seen_tag TEXT,
  auto_first_seen_at INTEGER,
  auto_last_attempt_version TEXT,
  auto_last_attempt_at INTEGER,
  auto_last_success_version TEXT,
  auto_last_success_at INTEGER,
  updated_at_ms INTEGER NOT NULL
);

CREATE TABLE config_health_entries (
  config_path TEXT NOT NULL PRIMARY KEY,
  last_known_good_json TEXT,
  last_promoted_good_json TEXT,
  last_observed_suspicious_signature TEXT,
  updated_at_ms INTEGER NOT NULL
);

CREATE TABLE workspace_setup_state (
  workspace_key TEXT NOT NULL PRIMARY KEY,
  workspace_path TEXT,
  version INTEGER,
  bootstrap_seeded_at INTEGER,
  setup_completed_at INTEGER,
  updated_at INTEGER NOT NULL
);

CREATE TABLE tui_last_sessions (
  scope_key TEXT NOT NULL PRIMARY KEY,
  session_key TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);

-- raw_json is the legacy models.json text as read, so it is not forced to parse.
CREATE TABLE agent_model_catalogs (
  catalog_key TEXT NOT NULL PRIMARY KEY,
  agent_dir TEXT NOT NULL,
  raw_json TEXT,
  updated_at INTEGER NOT NULL
);

-- Shared across providers (e.g. provider_id = 'openrouter') instead of per-provider caches.
CREATE TABLE model_capability_cache (
  provider_id TEXT NOT NULL,
  model_id TEXT NOT NULL,
  name TEXT,
  input_text INTEGER CHECK (input_text IN (0, 1)),
  input_image INTEGER CHECK (input_image IN (0, 1)),
  reasoning INTEGER CHECK (reasoning IN (0, 1)),
  supports_tools INTEGER CHECK (supports_tools IN (0, 1)),
  context_window INTEGER,
  max_tokens INTEGER,
  cost_input REAL,
  cost_output REAL,
  cost_cache_read REAL,
  cost_cache_write REAL,
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (provider_id, model_id)
);
CREATE INDEX model_capability_cache_updated_at_ms_idx ON model_capability_cache (updated_at_ms);

-- Registry kinds mirror the legacy files (containers.json, browsers.json).
CREATE TABLE sandbox_registry_entries (
  registry_kind TEXT NOT NULL,
  container_name TEXT NOT NULL,
  session_key TEXT,
  backend_id TEXT,
  runtime_label TEXT,
  image TEXT,
  created_at_ms INTEGER,
  last_used_at_ms INTEGER,
  config_label_kind TEXT,
  config_hash TEXT,
  cdp_port INTEGER,
  no_vnc_port INTEGER,
  entry_json TEXT,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (registry_kind, container_name)
);
CREATE INDEX sandbox_registry_entries_session_key_idx ON sandbox_registry_entries (session_key);
CREATE INDEX sandbox_registry_entries_last_used_at_ms_idx ON sandbox_registry_entries (last_used_at_ms);

-- ---------------------------------------------------------------------------
-- @additive: objects added to schema v1 after its first release. Everything below
-- uses IF NOT EXISTS: a write open of an existing v1 database creates what is
-- missing (readers never do; they fall back to what the file has).
-- ---------------------------------------------------------------------------

-- The installed-plugin index (legacy plugins/installs.json): one singleton row. install_records_json is
-- the durable part; plugins_json is the manifest cache the runtime can rebuild.
CREATE TABLE IF NOT EXISTS installed_plugin_index (
  index_key TEXT NOT NULL PRIMARY KEY,
  version INTEGER NOT NULL,
  host_contract_version TEXT,
  compat_registry_version TEXT,
  migration_version INTEGER,
  policy_hash TEXT,
  generated_at_ms INTEGER,
  refresh_reason TEXT,
  install_records_json TEXT NOT NULL CHECK (json_valid(install_records_json)),
  plugins_json TEXT NOT NULL CHECK (json_valid(plugins_json)),
  diagnostics_json TEXT NOT NULL CHECK (json_valid(diagnostics_json)),
  warning TEXT,
  updated_at_ms INTEGER NOT NULL
);

-- ---------------------------------------------------------------------------
-- ACP replay ledger (legacy acp/event-ledger.json)
-- ---------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS acp_replay_sessions (
  session_id TEXT NOT NULL PRIMARY KEY,
  session_key TEXT NOT NULL,
  cwd TEXT NOT NULL,
  complete INTEGER NOT NULL CHECK (complete IN (0, 1)),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  next_seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS acp_replay_sessions_key_updated_idx ON acp_replay_sessions (session_key, complete, updated_at DESC);

-- update_json is one ACP SessionUpdate; replay reads the events of a session in seq order.
CREATE TABLE IF NOT EXISTS acp_replay_events (
  session_id TEXT NOT NULL REFERENCES acp_replay_sessions (session_id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  at INTEGER NOT NULL,
  session_key TEXT NOT NULL,
  run_id TEXT,
  update_json TEXT NOT NULL CHECK (json_valid(update_json)),
  PRIMARY KEY (session_id, seq)
);
