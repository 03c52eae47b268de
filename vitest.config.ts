// Test runner settings: real files in temp dirs, so tests run in forks with a generous timeout.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The reliability suite has its own config and script (`npm run test:reliability`).
    exclude: ["test/reliability/**", "test/compat/**", "**/node_modules/**"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
