// A source's stable name: names that merely start with ".." are inside the root.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sourceRelativePath } from "../../src/migration/inventory.js";

describe("sourceRelativePath", () => {
  const root = path.join(path.sep, "state");
  it("keeps `..x` and `...` inside the root relative", () => {
    expect(sourceRelativePath(root, path.join(root, "..x", "a.json"))).toBe("..x/a.json");
    expect(sourceRelativePath(root, path.join(root, "..."))).toBe("...");
  });
  it("gives the absolute path for files outside the root and for the root itself", () => {
    expect(sourceRelativePath(root, path.join(path.sep, "other", "a.json"))).toBe("/other/a.json");
    expect(sourceRelativePath(root, root)).toBe("/state");
  });
});
