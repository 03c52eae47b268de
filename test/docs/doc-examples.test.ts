// The example markers parse as documented in test/docs/examples.test.ts; unmarked and malformed ones are caught.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir } from "../helpers/temp-state.js";
import { extractBlocks, isExample } from "./doc-examples.js";

function parse(markdown: string) {
  const root = makeTempDir("ocs-doc-parse-");
  fs.writeFileSync(path.join(root, "x.md"), markdown);
  return extractBlocks(root, "x.md");
}

describe("doc example markers", () => {
  it("reads run options, several markers per block, skip reasons and covering tests", () => {
    const [a, b, c] = parse(
      [
        "<!-- example: script state=locked no-sleep exit=75 -->",
        "",
        "<!-- example: lines exit=0,2 needs=jq silent -->",
        "```sh",
        "a",
        "b",
        "```",
        "<!-- example: skip: needs a real gateway -->",
        "```sh",
        "x",
        "```",
        "<!-- example: covered by test/docs/operator-guide.test.ts -->",
        "```cron",
        "* * * * * x",
        "```",
      ].join("\n"),
    );
    expect(a!.markers).toMatchObject([
      { kind: "script", state: "locked", noSleep: true, exits: [75], silent: false },
      { kind: "lines", state: "migrated", exits: [0, 2], needs: ["jq"], silent: true },
    ]);
    expect(a!.body).toBe("a\nb\n");
    expect(b!.markers).toEqual([{ kind: "skip", reason: "needs a real gateway", raw: "skip: needs a real gateway" }]);
    expect(c!.markers).toMatchObject([{ kind: "covered", by: "test/docs/operator-guide.test.ts" }]);
  });

  it("reports malformed markers instead of ignoring them", () => {
    const [block] = parse("<!-- example: skip -->\n<!-- example: run exit=x -->\n<!-- example: walk -->\n<!-- example: covered -->\n```sh\nx\n```\n");
    expect(block!.markers).toEqual([]);
    expect(block!.invalid).toHaveLength(4);
  });

  it("a marker separated from its fence by prose does not count", () => {
    const [block] = parse("<!-- example: run -->\nSome text.\n```sh\nx\n```\n");
    expect(block!.markers).toEqual([]);
    expect(isExample(block!)).toBe(true);
  });

  it("counts shell, cron and code blocks and untagged command lines as examples; output and synopses are not", () => {
    const blocks = parse(
      [
        "```sh\nx\n```",
        "```cron\nx\n```",
        "```ts\nx\n```",
        "```\nopenclaw-state backup list --json\n```",
        "```\nopenclaw-state backup verify <archive> [--json]\n```",
        "```\nopenclaw-state doctor — /home/me/.openclaw\n```",
        "```json\n{}\n```",
        "```text\nerror: …\n```",
      ].join("\n"),
    );
    expect(blocks.map(isExample)).toEqual([true, true, true, true, false, false, false, false]);
  });
});
