// Importers for channel pairing files in the credentials dir: `<channel>[-<account>]-allowFrom.json` (who may
// message the bot: access control that must survive the upgrade) → channel_pairing_allow_entries, and
// `<channel>-pairing.json` (pending pairing requests) → channel_pairing_requests.
//
// Shapes (OpenClaw src/pairing/allow-from-store-file.ts, pairing-store.ts): allowFrom files are
// {version:1, allowFrom:[sender, …]}; pairing files {version:1, requests:[{id, code, createdAt, lastSeenAt,
// meta:{accountId, …}}]} with ISO timestamps. Channel and account come from the file name; codes are secrets
// and never appear in notes or warnings.
import fs from "node:fs";
import path from "node:path";
import { isRegularFile, sourceRelativePath } from "../inventory.js";
import { isObject, shapeError } from "../json-source.js";
import type { DetectContext, DetectedSource, SourceKind } from "../types.js";
import { json, jsonRowsImporter, ms, row, str, type RowSpec } from "./json-rows.js";
import { credentialsDir } from "./oauth-credentials.js";

export const DEFAULT_ACCOUNT_ID = "default";

/**
 * Channel ids with a hyphen, so `<channel>-<account>` file names split right. Any other name splits at its
 * first hyphen (channel, then account); a name without one is the channel's default account.
 */
const HYPHENATED_CHANNELS = ["nextcloud-talk", "synology-chat", "google-chat", "qa-channel", "zalo-personal"];

/** `telegram` → (telegram, default); `telegram-work` → (telegram, work); `nextcloud-talk-ops` → (nextcloud-talk, ops). */
export function channelAndAccount(stem: string): { channel: string; account: string } {
  const lower = stem.toLowerCase();
  const known = HYPHENATED_CHANNELS.find((c) => lower === c || lower.startsWith(`${c}-`));
  if (known) return { channel: known, account: lower.length > known.length ? lower.slice(known.length + 1) : DEFAULT_ACCOUNT_ID };
  const dash = lower.indexOf("-");
  return dash > 0 ? { channel: lower.slice(0, dash), account: lower.slice(dash + 1) } : { channel: lower, account: DEFAULT_ACCOUNT_ID };
}

/** Files named `*<suffix>` in the credentials dir (and, for older layouts, the state dir itself). */
function pairingFiles(kind: SourceKind, ctx: DetectContext, suffix: string): DetectedSource[] {
  const found: DetectedSource[] = [];
  const seen = new Set<string>();
  for (const dir of [credentialsDir(ctx), ctx.root]) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names.filter((n) => n.endsWith(suffix) && n.length > suffix.length).sort()) {
      const file = path.resolve(dir, name);
      if (seen.has(file)) continue;
      seen.add(file);
      if (isRegularFile(file)) found.push({ kind, agentId: null, path: file, relativePath: sourceRelativePath(ctx.root, file), legacyRoot: false });
    }
  }
  return found;
}

function stemOf(relativePath: string, suffix: string): string {
  return path.posix.basename(relativePath).slice(0, -suffix.length);
}

const ALLOW_SUFFIX = "-allowFrom.json";
const PAIRING_SUFFIX = "-pairing.json";

export const channelAllowFromImporter = jsonRowsImporter({
  kind: "channel-allow-from",
  label: { one: "legacy channel allowFrom list", many: "legacy channel allowFrom lists", records: "senders" },
  targetTable: "channel_pairing_allow_entries",
  targetTables: ["channel_pairing_allow_entries"],
  detect: (ctx) => pairingFiles("channel-allow-from", ctx, ALLOW_SUFFIX),
  rows(value, source) {
    const list = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.allowFrom) ? value.allowFrom : null;
    if (!list) throw shapeError(source.path, 'an object with an "allowFrom" array', value);
    const { channel, account } = channelAndAccount(stemOf(source.relativePath, ALLOW_SUFFIX));
    const entries: string[] = [];
    let wildcard = false;
    let skipped = 0;
    for (const raw of list) {
      const entry = typeof raw === "number" && Number.isFinite(raw) ? String(raw) : str(raw);
      if (entry === null) skipped += 1;
      else if (entry === "*") wildcard = true;
      else if (!entries.includes(entry)) entries.push(entry);
    }
    const warnings: string[] = [];
    if (skipped > 0) warnings.push(`${skipped} allowFrom item(s) that are not strings were skipped`);
    // The pairing store holds paired senders only; "everyone" is a channel policy in openclaw.json.
    if (wildcard) warnings.push(`a "*" entry was not imported: open access is set with channels.${channel}.dmPolicy / allowFrom in openclaw.json, not in the pairing store`);
    const rows = entries.map((entry, sortOrder) =>
      row("channel_pairing_allow_entries", ["channel_key", "account_id", "entry"], { channel_key: channel, account_id: account, entry, sort_order: sortOrder, updated_at: source.mtimeMs }),
    );
    return { records: list.length, rows, skipped: skipped + (wildcard ? 1 : 0), warnings, notes: [`channel ${channel}, account ${account}: ${rows.length} sender(s)`] };
  },
});

export const channelPairingImporter = jsonRowsImporter({
  kind: "channel-pairing",
  label: { one: "legacy channel pairing file", many: "legacy channel pairing files", records: "requests" },
  targetTable: "channel_pairing_requests",
  targetTables: ["channel_pairing_requests"],
  detect: (ctx) => pairingFiles("channel-pairing", ctx, PAIRING_SUFFIX),
  rows(value, source) {
    const list = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.requests) ? value.requests : null;
    if (!list) throw shapeError(source.path, 'an object with a "requests" array', value);
    const { channel } = channelAndAccount(stemOf(source.relativePath, PAIRING_SUFFIX));
    const rows: RowSpec[] = [];
    let skipped = 0;
    for (const r of list) {
      const id = isObject(r) ? str(r.id) : null;
      if (!isObject(r) || id === null) {
        skipped += 1;
        continue;
      }
      const meta = isObject(r.meta) ? r.meta : {};
      const createdAt = ms(r.createdAt);
      rows.push(
        row("channel_pairing_requests", ["channel_key", "account_id", "request_id"], {
          channel_key: channel,
          account_id: (str(meta.accountId) ?? DEFAULT_ACCOUNT_ID).toLowerCase(),
          request_id: id,
          code: str(r.code),
          created_at: createdAt,
          last_seen_at: ms(r.lastSeenAt) ?? createdAt,
          meta_json: json(Object.keys(meta).length > 0 ? meta : null),
        }),
      );
    }
    return { records: list.length, rows, skipped, ...(skipped ? { warnings: [`${skipped} request(s) without an id were skipped`] } : {}) };
  },
});
