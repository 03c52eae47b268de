// Our message-content reshaping beside OpenClaw 2026.9.6's own (its codec's normalizeLoadedFileEntry, loaded from the installed package), shape by shape.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { loadedContentShape } from "../../src/migration/importers/transcript-normalize.js";
import { TRANSCRIPT_CONTENT_SHAPES } from "../migration/importers/transcript-content-shapes.js";
import { openclawInstall, pinnedVersions } from "./helpers/openclaw.js";

type Entry = Record<string, unknown>;
const current = pinnedVersions().versions.find((v) => v.role === "current")!;
const install = openclawInstall(current.version);

/** The codec's reader, found by name in the package's hashed chunks (the export alias read from the chunk's export list). */
async function theirReader(entryFile: string): Promise<(entry: Entry) => Entry> {
  const dist = join(dirname(entryFile), "dist");
  for (const name of readdirSync(dist).filter((n) => n.endsWith(".mjs"))) {
    const text = readFileSync(join(dist, name), "utf8");
    if (!text.includes("function normalizeLoadedFileEntry(")) continue;
    const alias = /normalizeLoadedFileEntry as (\w+)/.exec(text)?.[1];
    if (!alias) continue;
    const mod = (await import(pathToFileURL(join(dist, name)).href)) as Record<string, (entry: Entry) => Entry>;
    return mod[alias]!;
  }
  throw new Error(`normalizeLoadedFileEntry not found under ${dist}`);
}

describe.skipIf(!install)(`message content is stored as openclaw@${current.version}'s codec reads it`, () => {
  let read: (entry: Entry) => Entry;
  beforeAll(async () => {
    read = await theirReader(install!.entry);
  });

  it.each(Object.entries(TRANSCRIPT_CONTENT_SHAPES))("%s", (_name, shape) => {
    const theirs = read(structuredClone(shape.entry));
    expect(JSON.stringify(loadedContentShape(structuredClone(shape.entry)))).toBe(JSON.stringify(theirs));
    // The fixed expectation the Node 20 suite checks is the oracle's answer too.
    expect(JSON.stringify(theirs)).toBe(JSON.stringify(shape.stored));
  });
});
