#!/usr/bin/env node
// Writes schema/openclaw/<release>-{state,agent}.sql from databases a released OpenClaw's own doctor created (the observed format).
// Usage: node scripts/dump-openclaw-schema.mjs <release> <global.sqlite> <agent.sqlite>
// Objects are written in creation order (sqlite_master rowid); SQLite's internal tables and FTS5 shadow tables
// are left out because the statements that made them (CREATE VIRTUAL TABLE, AUTOINCREMENT) make them again.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [release, globalDb, agentDb] = process.argv.slice(2);
if (!release || !globalDb || !agentDb) {
  console.error("usage: node scripts/dump-openclaw-schema.mjs <release> <global.sqlite> <agent.sqlite>");
  process.exit(2);
}

function dump(file, role) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const version = db.pragma("user_version", { simple: true });
  const rows = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").all();
  const virtual = rows.filter((r) => /^CREATE VIRTUAL TABLE/i.test(r.sql)).map((r) => r.name);
  const shadow = (name) => virtual.some((v) => name.startsWith(`${v}_`) && /^(data|idx|content|docsize|config)$/.test(name.slice(v.length + 1)));
  const kept = rows.filter((r) => !r.name.startsWith("sqlite_") && !(r.type === "table" && shadow(r.name)));
  db.close();
  let out = `-- OpenClaw ${release} ${role} database format (user_version ${version}), as its own \`openclaw doctor --fix\` creates it.\n`;
  out += "-- Observed with scripts/dump-openclaw-schema.mjs; the compat suite checks it against the real package (docs/compat.md).\n";
  out += `PRAGMA user_version = ${version};\n\n`;
  for (const r of kept) out += `${r.sql};\n\n`;
  const target = path.join(root, "schema", "openclaw", `${release}-${role}.sql`);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, out);
  console.log(`wrote ${path.relative(root, target)} (${kept.length} objects, user_version ${version})`);
}

dump(globalDb, "state");
dump(agentDb, "agent");
