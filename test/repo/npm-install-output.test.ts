// `npm install` in the clone shows dependency install scripts (issue 25 item 7): a from-source better-sqlite3 build says why it compiles.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

describe("npm install output", () => {
  it("npm, run in the repository, has foreground-scripts on", () => {
    const env = { ...process.env };
    // The test runner's own npm settings must not decide the answer.
    for (const k of Object.keys(env)) if (k.toLowerCase().startsWith("npm_config_")) delete env[k];
    const value = execFileSync("npm", ["config", "get", "foreground-scripts"], { cwd: root, env, encoding: "utf8" }).trim();
    expect(value).toBe("true");
  });
});
