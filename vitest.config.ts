// Test runner settings: real files in temp dirs, so tests run in forks with a generous timeout.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The reliability suite has its own config and script (`npm run test:reliability`).
    exclude: ["test/reliability/**", "test/compat/**", "**/node_modules/**"],
    // Builds dist/ once when it is older than src/ (the e2e tests spawn bin/, which loads dist/): never in a test's hook.
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
