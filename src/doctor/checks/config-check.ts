// Config path check: a FIFO, device, directory or dangling link where the config file belongs is named
// (every reader skips it unread instead of blocking on it).
import { configPathProblem } from "../../state/state-dir.js";
import type { CheckContext, CheckResult, DoctorCheck } from "../types.js";

export const configCheck: DoctorCheck = {
  id: "config",
  run(ctx: CheckContext): CheckResult {
    const problem = configPathProblem(ctx.paths);
    if (!problem) return { findings: [], repairs: [] };
    return {
      findings: [
        {
          id: "config.not-a-file",
          severity: "warning",
          title: "Config path is not a regular file",
          detail: problem,
          fix: "Move it aside and put the real openclaw.json there (or point OPENCLAW_CONFIG_PATH at it); doctor leaves it alone.",
          path: ctx.paths.configPath,
        },
      ],
      repairs: [],
    };
  },
};
