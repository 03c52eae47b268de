// Archives named by a short id or `latest`: `backup list` shows ids (longer on collision) within 100 columns, and
// `backup verify|restore` resolve them among this state's listed archives; ambiguity is exit 2 naming the candidates.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { archiveIdOf, assignShortIds } from "../../src/backup/archive-id.js";
import { createBackup } from "../../src/backup/create-backup.js";
import { resolveArchiveRef } from "../../src/backup/resolve-archive-ref.js";
import { cellWidth } from "../../src/cli/render/table.js";
import { seedState } from "../helpers/backup-state.js";
import { makeTempDir, makeTempState, runBin, type TempState } from "../helpers/temp-state.js";

const ID_A = "abcd1234-1111-4111-8111-111111111111";
const ID_B = "abcd1234-2222-4222-8222-222222222222";

afterEach(() => {
  vi.restoreAllMocks();
});

/** Two verified backups whose run ids share their first 8 hex digits (the second is the newest). */
async function twoBackups(): Promise<{ state: TempState; first: string; second: string }> {
  const state = makeTempState("legacy-state");
  seedState(state);
  const ids = [ID_A, ID_B];
  const real = crypto.randomUUID.bind(crypto);
  vi.spyOn(crypto, "randomUUID").mockImplementation(() => (ids.shift() ?? real()) as ReturnType<typeof crypto.randomUUID>);
  const first = (await createBackup({ paths: state.paths, includeWorkspace: false })).archivePath;
  await new Promise((r) => setTimeout(r, 5));
  const second = (await createBackup({ paths: state.paths, includeWorkspace: false })).archivePath;
  vi.restoreAllMocks();
  return { state, first, second };
}

describe("archive ids", () => {
  it("are the run id's hex digits; a run id of another shape is hashed, never shown", () => {
    expect(archiveIdOf(ID_A)).toBe("abcd1234111141118111111111111111");
    expect(archiveIdOf("ABCD1234-1111-4111-8111-111111111111")).toBe("abcd1234111141118111111111111111");
    expect(archiveIdOf("\u001b]0;pwned\u0007")).toMatch(/^[0-9a-f]{64}$/);
    expect(archiveIdOf(null)).toBeNull();
  });

  it("short ids are 8 hex digits, longer where another archive shares the prefix, and equal for copies", () => {
    const items = [
      { id: "abcd1234aaaa", shortId: null as string | null },
      { id: "abcd1234bbbb", shortId: null as string | null },
      { id: "ffff0000cccc", shortId: null as string | null },
      { id: "ffff0000cccc", shortId: null as string | null },
      { id: null, shortId: null as string | null },
    ];
    assignShortIds(items);
    expect(items.map((i) => i.shortId)).toEqual(["abcd1234a", "abcd1234b", "ffff0000", "ffff0000", null]);
  });
});

describe("backup list and archive references (binary)", () => {
  it("list fits 100 columns (80 when the terminal is narrower) with short ids; verify and restore take an id or latest", async () => {
    const { state, first, second } = await twoBackups();

    for (const columns of [undefined, "200", "80"]) {
      const listed = await runBin(["backup", "list"], { ...state.env, ...(columns ? { COLUMNS: columns } : {}) });
      expect(listed.code, listed.stderr).toBe(0);
      const limit = columns === "80" ? 80 : 100;
      for (const line of listed.stdout.trimEnd().split("\n").slice(1)) expect(cellWidth(line), `${columns}: ${line}`).toBeLessThanOrEqual(limit);
      expect(listed.stdout).toMatch(/^ID\s+Created \(UTC\)\s+Status\s+Type\s+Size\s+Archive$/m);
      // The shared 8-digit prefix makes both ids one digit longer.
      expect(listed.stdout).toMatch(/^abcd12342\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+completed\s/m);
      expect(listed.stdout).toMatch(/^abcd12341\s/m);
    }
    const doc = JSON.parse((await runBin(["backup", "list", "--json"], state.env)).stdout);
    expect(doc.backups.map((b: { shortId: string }) => b.shortId)).toEqual(["abcd12342", "abcd12341"]);
    expect(doc.backups[0]).toMatchObject({ archivePath: second, id: "abcd1234222242228222222222222222", createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    expect(doc.backups[0]).not.toHaveProperty("createdAtIso");

    const byId = await runBin(["backup", "verify", "abcd12341"], state.env);
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout).toContain(`abcd12341 is abcd12341 ${first}`);
    expect(byId.stdout).toContain(`${first} verified`);

    const latest = await runBin(["backup", "verify", "latest", "--json"], state.env);
    expect(latest.code, latest.stderr).toBe(0);
    expect(JSON.parse(latest.stdout)).toMatchObject({ ok: true, archivePath: second });

    const target = path.join(makeTempDir(), "restored");
    const restored = await runBin(["backup", "restore", "ABCD12342", "--target", target, "--yes", "--json"], state.env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ ok: true, archivePath: second });

    const ambiguous = await runBin(["backup", "restore", "abcd1234", "--target", path.join(makeTempDir(), "t"), "--yes"], state.env);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('"abcd1234" is ambiguous: 2 archives share the prefix abcd1234');
    expect(ambiguous.stderr).toContain(first);
    expect(ambiguous.stderr).toContain(second);
    const ambiguousJson = await runBin(["backup", "verify", "abcd", "--json"], state.env);
    expect(ambiguousJson.code).toBe(2);
    expect(JSON.parse(ambiguousJson.stdout)).toMatchObject({ ok: false, error: { code: "ambiguous_archive" } });

    const unknown = await runBin(["backup", "verify", "ffff0000"], state.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No archive in .* has an id starting with ffff0000; `openclaw-state backup list` shows the ids/);

    // A copy of an archive has the same id: no prefix tells them apart, so naming it is refused.
    fs.copyFileSync(first, path.join(path.dirname(first), `copy-${path.basename(first)}`));
    const copies = await runBin(["backup", "verify", "abcd12341"], state.env);
    expect(copies.code).toBe(2);
    expect(copies.stderr).toMatch(/2 archives are copies with the same id/);
  }, 180_000);

  it("latest with no archive is a clear not_found; a path is still a path", async () => {
    const state = makeTempState("legacy-state");
    const none = await runBin(["backup", "verify", "latest"], state.env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/There is no archive for `latest` in .*-backups; take one with `openclaw-state backup create`/);
    const missing = await runBin(["backup", "verify", path.join(state.root, "nope.tar.gz")], state.env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).not.toMatch(/latest|has an id/);
  });

  it("a reference that is also a file in the current directory is refused as ambiguous", async () => {
    const state = makeTempState("legacy-state");
    const cwd = makeTempDir();
    fs.writeFileSync(path.join(cwd, "latest"), "");
    await expect(resolveArchiveRef({ paths: state.paths, ref: "latest", cwd })).rejects.toMatchObject({ exitCode: 2, code: "ambiguous_archive" });
    expect(await resolveArchiveRef({ paths: state.paths, ref: "./latest", cwd })).toEqual({ archivePath: "./latest", via: "path" });
    expect(await resolveArchiveRef({ paths: state.paths, ref: "-", cwd })).toEqual({ archivePath: "-", via: "path" });
  });
});
