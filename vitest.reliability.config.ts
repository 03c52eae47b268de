// `npm run test:reliability`: crash loops, fuzzing, concurrency and permission sweeps (test/reliability/, not in `npm test`).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/reliability/**/*.test.ts"],
    pool: "forks",
    // Crash loops and fuzzers spawn many processes; two files at a time keep a 2-core box responsive.
    maxWorkers: 2,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
