// Our fold of legacy route fields into `delivery` beside OpenClaw 2026.9.6's own (its doctor's normalizeLegacySessionEntryDelivery, loaded from the installed package), shape by shape.
import { beforeAll, describe, expect, it } from "vitest";
import { normalizeEntry } from "../../src/state/upgrade/agent-entry-shape.js";
import { LEGACY_DELIVERY_SHAPES } from "../state/upgrade/legacy-delivery-shapes.js";
import { loadOpenClawFunction, openclawInstall, pinnedVersions } from "./helpers/openclaw.js";

type Entry = Record<string, unknown>;
const current = pinnedVersions().versions.find((v) => v.role === "current")!;
const install = openclawInstall(current.version);

describe.skipIf(!install)(`legacy route fields fold into delivery as openclaw@${current.version}'s doctor folds them`, () => {
  let fold: (entry: Entry) => Entry;
  beforeAll(async () => {
    fold = await loadOpenClawFunction<(entry: Entry) => Entry>(install!.entry, "normalizeLegacySessionEntryDelivery");
  });

  it.each(Object.entries(LEGACY_DELIVERY_SHAPES))("%s", (_name, shape) => {
    const theirs = fold(structuredClone(shape.entry));
    const ours = normalizeEntry(structuredClone(shape.entry), "s-1", 1000).entry;
    expect({ delivery: ours.delivery, chatType: ours.chatType }).toEqual({ delivery: theirs.delivery, chatType: theirs.chatType });
    // The fixed expectation the Node 20 suite checks is the oracle's answer too.
    expect(theirs.delivery).toEqual(shape.delivery);
  });
});
