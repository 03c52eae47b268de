#!/usr/bin/env node
// `npm run demo`: copies the bundled legacy state from fixtures/ into a temp dir and runs the tool on it.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bin = path.join(root, "bin", "openclaw-state.js");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "openclaw-state-demo-"));
const stateDir = path.join(work, ".openclaw");
fs.cpSync(path.join(root, "fixtures", "legacy-state"), stateDir, { recursive: true });

console.log(`Demo state copied to ${stateDir}`);
console.log(`(backups go to ${stateDir}-backups; remove ${work} when done)\n`);

let failed = false;
function step(...args) {
  const full = ["--state-dir", stateDir, ...args];
  console.log(`$ openclaw-state ${full.join(" ")}`);
  const run = spawnSync(process.execPath, [bin, ...full], { stdio: "inherit", env: { ...process.env, OPENCLAW_HOME: work } });
  console.log(`(exit ${run.status})\n`);
  // doctor exits 1 when it finds errors; the demo goes on so every step is shown.
  if (run.status !== 0 && run.status !== 1) failed = true;
  return run.status;
}

step("doctor");
step("migrate", "plan", "--verbose");
step("doctor", "--fix", "--yes");
step("migrate", "history", "--verbose");
step("inspect");
step("sessions", "list", "--all-agents");
// A verified backup of the migrated state, checked again and listed.
const backupDir = `${stateDir}-backups`;
if (step("backup", "create") === 0) {
  const newest = fs.readdirSync(backupDir).filter((n) => /\.tar\.(gz|zst)$/.test(n)).sort().pop();
  if (newest) step("backup", "verify", path.join(backupDir, newest));
  else failed = true;
} else failed = true;
step("backup", "list");
console.log(`Demo state left in ${stateDir}`);
process.exitCode = failed ? 1 : 0;
