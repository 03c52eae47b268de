// Importers for small control-plane state files: update check, config health, TUI last session, commitments.
import { isObject, shapeError } from "../json-source.js";
import { fileSource, json, jsonRowsImporter, ms, num, row, str, type RowSpec } from "./json-rows.js";

/** `update-check.json`: one flat object of camelCase fields (timestamps as ISO strings) → the singleton row. */
export const updateCheckImporter = jsonRowsImporter({
  kind: "update-check",
  label: { one: "legacy update-check file", many: "legacy update-check files", records: "states" },
  targetTable: "update_check_state",
  targetTables: ["update_check_state"],
  detect: (ctx) => fileSource("update-check", ctx.root, "update-check.json"),
  rows(v, source) {
    if (!isObject(v)) throw shapeError(source.path, "an object", v);
    return {
      records: 1,
      rows: [
        row("update_check_state", ["state_key"], {
          state_key: "default",
          last_checked_at: ms(v.lastCheckedAt),
          last_notified_version: str(v.lastNotifiedVersion),
          last_notified_tag: str(v.lastNotifiedTag),
          last_available_version: str(v.lastAvailableVersion),
          last_available_tag: str(v.lastAvailableTag),
          auto_install_id: str(v.autoInstallId),
          auto_first_seen_version: str(v.autoFirstSeenVersion),
          auto_first_seen_tag: str(v.autoFirstSeenTag),
          auto_first_seen_at: ms(v.autoFirstSeenAt),
          auto_last_attempt_version: str(v.autoLastAttemptVersion),
          auto_last_attempt_at: ms(v.autoLastAttemptAt),
          auto_last_success_version: str(v.autoLastSuccessVersion),
          auto_last_success_at: ms(v.autoLastSuccessAt),
          updated_at_ms: source.mtimeMs,
        }),
      ],
    };
  },
});

/** `logs/config-health.json`: `{entries: {<configPath>: {lastKnownGood, lastPromotedGood, lastObservedSuspiciousSignature}}}` (a bare map too). */
export const configHealthImporter = jsonRowsImporter({
  kind: "config-health",
  label: { one: "legacy config-health file", many: "legacy config-health files", records: "configs" },
  targetTable: "config_health_entries",
  targetTables: ["config_health_entries"],
  detect: (ctx) => fileSource("config-health", ctx.root, "logs/config-health.json"),
  rows(v, source) {
    if (!isObject(v)) throw shapeError(source.path, "an object", v);
    const map = isObject(v.entries) ? v.entries : v;
    const entries = Object.entries(map).filter((e): e is [string, Record<string, unknown>] => isObject(e[1]));
    const rows = entries.map(([configPath, e]) =>
      row("config_health_entries", ["config_path"], {
        config_path: configPath,
        last_known_good_json: json(e.lastKnownGood),
        last_promoted_good_json: json(e.lastPromotedGood),
        last_observed_suspicious_signature: str(e.lastObservedSuspiciousSignature),
        updated_at_ms: ms(e.updatedAtMs) ?? source.mtimeMs,
      }),
    );
    return { records: entries.length, rows };
  },
});

/**
 * `tui/last-session.json`: a map scope → `{sessionKey, updatedAt}`; the older single pointer
 * `{sessionKey, updatedAt}` becomes scope "default".
 */
export const tuiLastSessionImporter = jsonRowsImporter({
  kind: "tui-last-session",
  label: { one: "legacy TUI last-session file", many: "legacy TUI last-session files", records: "pointers" },
  targetTable: "tui_last_sessions",
  targetTables: ["tui_last_sessions"],
  detect: (ctx) => fileSource("tui-last-session", ctx.root, "tui/last-session.json"),
  rows(v, source) {
    if (!isObject(v)) throw shapeError(source.path, "an object", v);
    const pointers: Array<[string, Record<string, unknown>]> =
      typeof v.sessionKey === "string" ? [["default", v]] : Object.entries(v).filter((e): e is [string, Record<string, unknown>] => isObject(e[1]));
    const rows: RowSpec[] = [];
    let skipped = 0;
    for (const [scope, p] of pointers) {
      const key = str(p.sessionKey);
      if (!key) {
        skipped += 1;
        continue;
      }
      rows.push(row("tui_last_sessions", ["scope_key"], { scope_key: scope, session_key: key, updated_at: ms(p.updatedAt) ?? source.mtimeMs }));
    }
    return { records: pointers.length, rows, skipped, ...(skipped ? { warnings: [`${skipped} pointer(s) without a sessionKey were skipped`] } : {}) };
  },
});

/** `commitments.json`: `{version, commitments: […]}` (or a bare array) of camelCase records → typed columns + record_json. */
export const commitmentsImporter = jsonRowsImporter({
  kind: "commitments",
  label: { one: "legacy commitments file", many: "legacy commitments files", records: "commitments" },
  targetTable: "commitments",
  targetTables: ["commitments"],
  detect: (ctx) => fileSource("commitments", ctx.root, "commitments.json"),
  rows(v, source) {
    const list = Array.isArray(v) ? v : isObject(v) && Array.isArray(v.commitments) ? v.commitments : null;
    if (!list) throw shapeError(source.path, 'an object with a "commitments" array', v);
    const rows: RowSpec[] = [];
    let skipped = 0;
    for (const c of list) {
      const id = isObject(c) ? str(c.id) : null;
      if (!isObject(c) || !id) {
        skipped += 1;
        continue;
      }
      const due = isObject(c.due) ? c.due : {};
      rows.push(
        row("commitments", ["id"], {
          id,
          agent_id: str(c.agentId),
          session_key: str(c.sessionKey),
          channel: str(c.channel),
          account_id: str(c.accountId),
          recipient_id: str(c.recipientId),
          thread_id: str(c.threadId) ?? (typeof c.threadId === "number" ? String(c.threadId) : null),
          sender_id: str(c.senderId),
          kind: str(c.kind),
          sensitivity: str(c.sensitivity),
          source: str(c.source),
          status: str(c.status),
          reason: str(c.reason),
          suggested_text: str(c.suggestedText),
          dedupe_key: str(c.dedupeKey),
          confidence: num(c.confidence),
          due_earliest_ms: ms(c.dueEarliestMs) ?? ms(due.earliestMs),
          due_latest_ms: ms(c.dueLatestMs) ?? ms(due.latestMs),
          due_timezone: str(c.dueTimezone) ?? str(due.timezone),
          source_message_id: str(c.sourceMessageId),
          source_run_id: str(c.sourceRunId),
          created_at_ms: ms(c.createdAtMs),
          updated_at_ms: ms(c.updatedAtMs) ?? ms(c.createdAtMs) ?? source.mtimeMs,
          attempts: num(c.attempts),
          last_attempt_at_ms: ms(c.lastAttemptAtMs),
          sent_at_ms: ms(c.sentAtMs),
          dismissed_at_ms: ms(c.dismissedAtMs),
          snoozed_until_ms: ms(c.snoozedUntilMs),
          expired_at_ms: ms(c.expiredAtMs),
          record_json: JSON.stringify(c),
        }),
      );
    }
    return { records: list.length, rows, skipped, ...(skipped ? { warnings: [`${skipped} commitment(s) without an id were skipped`] } : {}) };
  },
});
