// Our fold of legacy route fields into `delivery` beside OpenClaw 2026.9.6's own (its doctor's normalizeLegacySessionEntryDelivery, loaded from the installed package), shape by shape.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { normalizeEntry } from "../../src/state/upgrade/agent-entry-shape.js";
import { LEGACY_DELIVERY_SHAPES } from "../state/upgrade/legacy-delivery-shapes.js";
import { openclawInstall, pinnedVersions } from "./helpers/openclaw.js";

type Entry = Record<string, unknown>;
const current = pinnedVersions().versions.find((v) => v.role === "current")!;
const install = openclawInstall(current.version);

/** The doctor's fold, found by name in the package's hashed chunks (the export alias is read from the chunk's export list). */
async function theirFold(entryFile: string): Promise<(entry: Entry) => Entry> {
  const dist = join(dirname(entryFile), "dist");
  for (const name of readdirSync(dist).filter((n) => n.endsWith(".mjs"))) {
    const text = readFileSync(join(dist, name), "utf8");
    if (!text.includes("function normalizeLegacySessionEntryDelivery(")) continue;
    const alias = /normalizeLegacySessionEntryDelivery as (\w+)/.exec(text)?.[1];
    if (!alias) continue;
    const mod = (await import(pathToFileURL(join(dist, name)).href)) as Record<string, (entry: Entry) => Entry>;
    return mod[alias]!;
  }
  throw new Error(`normalizeLegacySessionEntryDelivery not found under ${dist}`);
}

describe.skipIf(!install)(`legacy route fields fold into delivery as openclaw@${current.version}'s doctor folds them`, () => {
  let fold: (entry: Entry) => Entry;
  beforeAll(async () => {
    fold = await theirFold(install!.entry);
  });

  it.each(Object.entries(LEGACY_DELIVERY_SHAPES))("%s", (_name, shape) => {
    const theirs = fold(structuredClone(shape.entry));
    const ours = normalizeEntry(structuredClone(shape.entry), "s-1", 1000).entry;
    expect({ delivery: ours.delivery, chatType: ours.chatType }).toEqual({ delivery: theirs.delivery, chatType: theirs.chatType });
    // The fixed expectation the Node 20 suite checks is the oracle's answer too.
    expect(theirs.delivery).toEqual(shape.delivery);
  });
});
