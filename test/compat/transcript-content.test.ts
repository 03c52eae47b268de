// Our message-content reshaping beside OpenClaw 2026.9.6's own (its codec's normalizeLoadedFileEntry, loaded from the installed package), shape by shape.
import { beforeAll, describe, expect, it } from "vitest";
import { loadedContentShape } from "../../src/migration/importers/transcript-normalize.js";
import { TRANSCRIPT_CONTENT_SHAPES } from "../migration/importers/transcript-content-shapes.js";
import { loadOpenClawFunction, openclawInstall, pinnedVersions } from "./helpers/openclaw.js";

type Entry = Record<string, unknown>;
const current = pinnedVersions().versions.find((v) => v.role === "current")!;
const install = openclawInstall(current.version);

describe.skipIf(!install)(`message content is stored as openclaw@${current.version}'s codec reads it`, () => {
  let read: (entry: Entry) => Entry;
  beforeAll(async () => {
    read = await loadOpenClawFunction<(entry: Entry) => Entry>(install!.entry, "normalizeLoadedFileEntry");
  });

  it.each(Object.entries(TRANSCRIPT_CONTENT_SHAPES))("%s", (_name, shape) => {
    const theirs = read(structuredClone(shape.entry));
    expect(JSON.stringify(loadedContentShape(structuredClone(shape.entry)))).toBe(JSON.stringify(theirs));
    // The fixed expectation the Node 20 suite checks is the oracle's answer too.
    expect(JSON.stringify(theirs)).toBe(JSON.stringify(shape.stored));
  });
});
