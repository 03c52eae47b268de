// `doctor --json` as the e2e tests read it, with the one rule of --json checked on every read: ok is exactly "the exit code is 0".
import { expect } from "vitest";
import type { CliRun } from "./temp-state.js";

export interface DoctorJson {
  ok: boolean;
  exitCode: number;
  status: string;
  findings: Array<{ id: string; severity: string; title: string }>;
  repairs: Array<{ id: string; status: string; detail?: string; rows?: { backupPath: string | null; moved: Array<{ from: string; to: string; action: string }>; left: Array<{ row: string; reason: string }> } }>;
}

export function doctorJson(run: CliRun): DoctorJson {
  const doc = JSON.parse(run.stdout) as DoctorJson;
  expect(doc.ok).toBe(run.code === 0);
  expect(doc.exitCode).toBe(run.code);
  return doc;
}
