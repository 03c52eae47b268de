// Importer: bindings/current-conversations.json → current_conversation_bindings (one row per bound conversation).
import { isObject, shapeError } from "../json-source.js";
import { fileSource, json, jsonRowsImporter, ms, row, str, type RowSpec } from "./json-rows.js";

const KINDS = new Set(["direct", "group", "channel"]);

/** `{version:1, bindings:[…]}`; a version-less `{bindings:[…]}` or a bare array is read the same way. */
function bindingsOf(file: string, value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (isObject(value) && Array.isArray(value.bindings)) return value.bindings;
  throw shapeError(file, 'an object with a "bindings" array', value);
}

/** `agent:<id>:…` names its agent. */
function agentOfSessionKey(key: string | null): string | null {
  const m = key ? /^agent:([^:]+):/.exec(key) : null;
  return m ? m[1]! : null;
}

export const conversationBindingsImporter = jsonRowsImporter({
  kind: "conversation-bindings",
  label: { one: "legacy conversation bindings file", many: "legacy conversation bindings files", records: "bindings" },
  targetTable: "current_conversation_bindings",
  targetTables: ["current_conversation_bindings"],
  detect: (ctx) => fileSource("conversation-bindings", ctx.root, "bindings/current-conversations.json"),
  rows(value, source) {
    const list = bindingsOf(source.path, value);
    const rows: RowSpec[] = [];
    let skipped = 0;
    list.forEach((b) => {
      const conv = isObject(b) && isObject(b.conversation) ? b.conversation : null;
      const channel = str(conv?.channel)?.toLowerCase() ?? null;
      const conversationId = str(conv?.conversationId);
      const targetSessionKey = isObject(b) ? str(b.targetSessionKey) : null;
      if (!isObject(b) || !conv || !channel || !conversationId || !targetSessionKey) {
        skipped += 1;
        return;
      }
      const accountId = str(conv.accountId) ?? "default";
      const kindRaw = str(conv.kind) ?? str(b.conversationKind);
      const kind = kindRaw && KINDS.has(kindRaw) ? kindRaw : "direct";
      const parent = str(conv.parentConversationId);
      const metadata = isObject(b.metadata) ? b.metadata : null;
      // The durable key includes the kind, so direct/group/channel refs with the same id never collide.
      const bindingKey = [channel, accountId, kind, parent ?? "", conversationId].join("\u241f");
      rows.push(
        row("current_conversation_bindings", ["binding_key"], {
          binding_key: bindingKey,
          binding_id: str(b.bindingId) ?? str(b.id),
          target_agent_id: str(metadata?.agentId) ?? agentOfSessionKey(targetSessionKey),
          target_session_id: str(b.targetSessionId) ?? str(metadata?.sessionId),
          target_session_key: targetSessionKey,
          channel,
          account_id: accountId,
          conversation_kind: kind,
          parent_conversation_id: parent,
          conversation_id: conversationId,
          target_kind: str(b.targetKind) ?? "session",
          status: str(b.status) ?? "active",
          bound_at: ms(b.boundAt),
          expires_at: ms(b.expiresAt),
          metadata_json: json(metadata),
          updated_at: ms(b.updatedAt) ?? ms(b.boundAt) ?? source.mtimeMs,
        }),
      );
    });
    const warnings = skipped > 0 ? [`${skipped} binding(s) without a channel, conversation id or target session key were skipped`] : [];
    return { records: list.length, rows, skipped, warnings };
  },
});
