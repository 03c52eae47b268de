// `npm run test:compat`: the real OpenClaw releases (scripts/compat/versions.json) against this tool; Node >= 24.16, not in `npm test`.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/compat/**/*.test.ts"],
    // Installs (or reuses) the pinned releases once; an install failure skips their tests with a loud note.
    globalSetup: ["test/compat/global-setup.ts"],
    pool: "forks",
    // One file at a time: each OpenClaw run is a heavy Node process and the doctors are minutes long on 2 cores.
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
