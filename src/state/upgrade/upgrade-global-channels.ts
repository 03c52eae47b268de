// Design-v1 channel pairing requests, conversation bindings, workspace setup, commitments and small settings → OpenClaw 2026.9.6.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { type GlobalUpgradeContext, bump, insertRow, note, parseJsonObject, readAll } from "./upgrade-global-context.js";
import { MACHINE_STATE_TABLES, isoOf, upgradeMachineState } from "./upgrade-global-machine-state.js";

export const CHANNEL_TABLES = ["channel_pairing_requests", "current_conversation_bindings", "commitments", "workspace_setup_state", ...MACHINE_STATE_TABLES] as const;

const SEP = "\u241f";
const BLOCKED_KEYS = new Set(["__proto__", "constructor", "prototype"]);

function unmapped(ctx: GlobalUpgradeContext, table: string, code: string, message: string, by = 1): void {
  bump(ctx.unmapped, table, by);
  note(ctx, code, message);
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value.trim() !== "" ? value.trim() : undefined);

/** OpenClaw's pairing store key: lower case, path-unsafe characters and ".." replaced by "_". */
function pairingKey(value: string): string {
  return value.trim().toLowerCase().replace(/[\\/:*?"<>|]/g, "_").replace(/\.\./g, "_");
}

/** channel_pairing_requests → same table; codes are secrets, so notes name only channel, account and request id. */
function upgradePairingRequests(ctx: GlobalUpgradeContext): void {
  for (const row of readAll(ctx, "channel_pairing_requests")) {
    const where = `channel_pairing_requests ${String(row.channel_key)}/${String(row.account_id)}/${String(row.request_id)}`;
    const code = text(row.code);
    const createdAt = isoOf(row.created_at);
    const channel = typeof row.channel_key === "string" ? pairingKey(row.channel_key) : "";
    if (!code || !createdAt || channel === "" || channel === "_" || !text(row.request_id)) {
      unmapped(ctx, "channel_pairing_requests", "global.pairing.incomplete", `${where}: no code, creation time or channel; OpenClaw 2026.9.6 drops such requests, so it stays in the design-v1 file only.`);
      continue;
    }
    const meta = parseJsonObject(row.meta_json);
    const kept = meta ? Object.fromEntries(Object.entries(meta).flatMap(([k, v]) => (text(v) === undefined ? [] : [[k, text(v)]]))) : {};
    if (meta && Object.keys(kept).length < Object.keys(meta).length) note(ctx, "global.pairing.meta-trimmed", `${where}: meta values that are not non-empty strings were dropped (OpenClaw keeps string meta only).`);
    insertRow(ctx, "channel_pairing_requests", {
      channel_key: channel,
      account_id: typeof row.account_id === "string" && row.account_id.trim() !== "" ? row.account_id.trim().toLowerCase() : "default",
      request_id: text(row.request_id),
      code,
      created_at: createdAt,
      last_seen_at: isoOf(row.last_seen_at) ?? createdAt,
      meta_json: Object.keys(kept).length > 0 ? JSON.stringify(kept) : null,
    });
  }
}

/** OpenClaw's account id: trimmed, lower case, runs of other characters than [a-z0-9_-] become "-", "default" when empty. */
export function accountIdOf(value: unknown): string {
  const trimmed = typeof value === "string" ? value.trim() : "";
  if (trimmed === "") return "default";
  const lower = trimmed.toLowerCase();
  const canonical = /^[a-z0-9][a-z0-9_-]{0,63}$/i.test(trimmed) ? lower : lower.replace(/[^a-z0-9_-]+/g, "-").replace(/^-+/, "").replace(/-+$/, "").slice(0, 64);
  return canonical === "" || BLOCKED_KEYS.has(canonical) ? "default" : canonical;
}

interface BindingRecord {
  bindingId: string;
  targetSessionKey: string;
  targetKind: string;
  conversation: { channel: string; accountId: string; kind?: string; conversationId: string; parentConversationId?: string };
  status: string;
  boundAt: number;
  expiresAt?: number;
  metadata?: Record<string, unknown>;
}

/** current_conversation_bindings → same table in 9.6's shape; a later row for the same conversation replaces an earlier one (as 9.6 does). */
function upgradeConversationBindings(ctx: GlobalUpgradeContext): void {
  const byKey = new Map<string, BindingRecord>();
  for (const row of readAll(ctx, "current_conversation_bindings")) {
    const conversationId = text(row.conversation_id);
    const targetSessionKey = text(row.target_session_key);
    const channel = typeof row.channel === "string" ? row.channel.trim().toLowerCase() : "";
    if (!conversationId || !targetSessionKey) {
      unmapped(ctx, "current_conversation_bindings", "global.binding.incomplete", `current_conversation_bindings ${String(row.binding_key)}: no conversation id or target session key; OpenClaw 2026.9.6 drops such bindings.`);
      continue;
    }
    const accountId = accountIdOf(row.account_id);
    const parentRaw = text(row.parent_conversation_id);
    const parent = parentRaw && parentRaw !== conversationId ? parentRaw : undefined;
    const key = [channel, accountId, parent ?? "", conversationId].join(SEP);
    // Design-v1 defaults a missing conversation kind to "direct", so only the other kinds are known to be in the source.
    const kind = typeof row.conversation_kind === "string" && row.conversation_kind !== "direct" ? row.conversation_kind : undefined;
    const metadata = parseJsonObject(row.metadata_json);
    const boundAt = typeof row.bound_at === "number" && Number.isFinite(row.bound_at) ? Math.floor(row.bound_at) : ctx.now;
    const expiresAt = typeof row.expires_at === "number" && Number.isFinite(row.expires_at) ? Math.floor(row.expires_at) : undefined;
    const record: BindingRecord = {
      bindingId: `generic:${key}`,
      targetSessionKey,
      targetKind: row.target_kind === "subagent" ? "subagent" : "session",
      conversation: { channel, accountId, ...(kind ? { kind } : {}), conversationId, ...(parent ? { parentConversationId: parent } : {}) },
      status: row.status === "ending" || row.status === "ended" ? row.status : "active",
      boundAt,
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(metadata ? { metadata } : {}),
    };
    if (byKey.has(key)) unmapped(ctx, "current_conversation_bindings", "global.binding.superseded", `current_conversation_bindings ${String(row.binding_key)}: OpenClaw keys bindings without the conversation kind, so this row replaces an earlier one for the same conversation; the earlier one stays in the design-v1 file only.`);
    byKey.delete(key);
    byKey.set(key, record);
  }
  for (const [key, r] of [...byKey].sort(([a], [b]) => a.localeCompare(b))) {
    insertRow(ctx, "current_conversation_bindings", {
      binding_key: key,
      binding_id: r.bindingId,
      target_session_key: r.targetSessionKey,
      channel: r.conversation.channel,
      account_id: r.conversation.accountId,
      conversation_kind: "current",
      parent_conversation_id: r.conversation.parentConversationId ?? null,
      conversation_id: r.conversation.conversationId,
      target_kind: r.targetKind,
      status: r.status,
      bound_at: r.boundAt,
      expires_at: r.expiresAt ?? null,
      metadata_json: r.metadata ? JSON.stringify(r.metadata) : null,
      record_json: JSON.stringify(r),
      updated_at: ctx.now,
    });
  }
  if (byKey.size > 0) note(ctx, "global.binding.reshaped", `current_conversation_bindings: ${byKey.size} binding(s) written the way OpenClaw 2026.9.6 imports them (binding id "generic:<conversation>", kind "current"); design-v1 binding ids, target agent and session ids have no OpenClaw column and stay in the design-v1 file.`);
}

/**
 * The workspace path OpenClaw keys state by: the real path (symlinks followed; for a missing tail, the real path of
 * the nearest existing ancestor plus the missing segments), NFC-normalized.
 */
function canonicalWorkspacePath(dir: string): string {
  const resolved = path.resolve(dir);
  const missing: string[] = [];
  let current = resolved;
  for (;;) {
    try {
      return path.normalize(path.join(fs.realpathSync.native(current), ...missing.reverse())).normalize("NFC");
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.normalize(resolved).normalize("NFC");
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

const sha256Hex = (value: string): string => crypto.createHash("sha256").update(value).digest("hex");

/** workspace_setup_state → same table (ISO milestones, version 1) plus the workspace_path_aliases rows 9.6 registers with it. */
function upgradeWorkspaceSetup(ctx: GlobalUpgradeContext): void {
  const aliasKeys = new Set<string>();
  for (const row of readAll(ctx, "workspace_setup_state")) {
    const where = `workspace_setup_state ${String(row.workspace_path ?? row.workspace_key)}`;
    if (typeof row.workspace_path !== "string" || row.workspace_path === "") {
      unmapped(ctx, "workspace_setup_state", "global.workspace.no-path", `${where}: no workspace path, which OpenClaw requires for setup state; kept in the design-v1 file only.`);
      continue;
    }
    if (row.version !== null && row.version !== 1) {
      unmapped(ctx, "workspace_setup_state", "global.workspace.version", `${where}: setup version ${String(row.version)}; OpenClaw 2026.9.6 supports version 1 only and refuses others.`);
      continue;
    }
    const workspacePath = canonicalWorkspacePath(row.workspace_path);
    const workspaceKey = sha256Hex(workspacePath);
    insertRow(ctx, "workspace_setup_state", {
      workspace_key: workspaceKey,
      workspace_path: workspacePath,
      version: 1,
      bootstrap_seeded_at: isoOf(row.bootstrap_seeded_at) ?? null,
      setup_completed_at: isoOf(row.setup_completed_at) ?? null,
      updated_at: ctx.now,
    });
    // The lexical path and the real path each get an alias row pointing at the canonical identity.
    const lexical = path.normalize(path.resolve(row.workspace_path)).normalize("NFC");
    for (const aliasPath of new Set([lexical, workspacePath])) {
      const aliasKey = sha256Hex(aliasPath);
      if (aliasKeys.has(aliasKey)) continue;
      aliasKeys.add(aliasKey);
      insertRow(ctx, "workspace_path_aliases", { alias_key: aliasKey, alias_path: aliasPath, workspace_key: workspaceKey, workspace_path: workspacePath, updated_at_ms: ctx.now });
    }
  }
}

/** commitments: 9.6's doctor discards the retired commitments store (it records a receipt, imports nothing). */
function keepCommitments(ctx: GlobalUpgradeContext): void {
  const n = readAll(ctx, "commitments").length;
  if (n > 0) unmapped(ctx, "commitments", "global.commitments.retired", `commitments: ${n} row(s) not copied: OpenClaw 2026.9.6 retired the commitments store (its doctor discards commitments.json without importing it) and has no table for them; they stay in the design-v1 file.`, n); // legacy-name-ok: names the legacy file in a note to the operator (never opened)
}

/**
 * Row shapes are the ones 9.6's own doctor --fix writes for the same legacy files (observed, see the tests):
 * - channel_pairing_requests: created_at / last_seen_at are ISO strings, meta_json keeps non-empty string values only;
 *   a request without a code or a creation time is dropped by 9.6.
 * - current_conversation_bindings: one row per (channel, account, parent, conversation) with conversation_kind
 *   'current', binding_id 'generic:<key>', record_json = the record OpenClaw reads back, updated_at = import time.
 * - workspace_setup_state: keyed by sha256 of the real workspace path, ISO milestones, plus its workspace_path_aliases.
 * - commitments: 9.6 discards the retired store (receipt only), so these rows have no home there.
 */
export function upgradeChannelState(ctx: GlobalUpgradeContext): void {
  upgradePairingRequests(ctx);
  upgradeConversationBindings(ctx);
  upgradeWorkspaceSetup(ctx);
  keepCommitments(ctx);
  upgradeMachineState(ctx);
}

