// Config check: a FIFO, device, directory or dangling link where the config file belongs is named (every reader
// skips it unread instead of blocking on it); otherwise the keys the current OpenClaw rejects, with who fixes each.
import { checkConfigCompat, CURRENT_OPENCLAW_VERSION, OPENCLAW_FIX_COMMAND, type RejectedConfigKey } from "../../migration/config-compat.js";
import { configPathProblem } from "../../state/state-dir.js";
import type { CheckContext, CheckResult, DoctorCheck, Finding } from "../types.js";

const line = (k: RejectedConfigKey): string => `${k.key} → ${k.wants}${k.blocked ? ` (left as is for now: ${k.blocked})` : ""}`;

function compatFindings(ctx: CheckContext): Finding[] {
  const compat = checkConfigCompat(ctx.paths, ctx.paths.stateDir);
  const ours = compat.rejected.filter((k) => k.fixedBy === "openclaw-state");
  const theirs = compat.rejected.filter((k) => k.fixedBy === "openclaw");
  const findings: Finding[] = [];
  if (ours.length > 0) {
    findings.push({
      id: "config.rejected-by-openclaw",
      severity: "warning",
      title: `${ours.length} key(s) in ${compat.path} that OpenClaw ${CURRENT_OPENCLAW_VERSION} rejects: \`openclaw-state doctor --fix\` rewrites them`,
      detail: ours.map(line).join("\n"),
      fix: "`openclaw-state doctor --fix` rewrites them after the verified backup, keeping the file's comments and formatting.",
      path: compat.path,
    });
  }
  if (theirs.length > 0) {
    findings.push({
      id: "config.rejected-by-openclaw.not-ours",
      severity: "warning",
      title: `${theirs.length} key(s) in ${compat.path} that OpenClaw ${CURRENT_OPENCLAW_VERSION} rejects and this tool does not rewrite`,
      detail: theirs.map(line).join("\n"),
      fix: `Run \`${OPENCLAW_FIX_COMMAND}\` (OpenClaw ${CURRENT_OPENCLAW_VERSION}) after \`openclaw-state doctor --fix\`: it rewrites them (re-serializing the file: comments are lost). \`openclaw config set|unset\` refuse while the config is invalid.`,
      path: compat.path,
    });
  }
  return findings;
}

export const configCheck: DoctorCheck = {
  id: "config",
  run(ctx: CheckContext): CheckResult {
    const problem = configPathProblem(ctx.paths);
    if (!problem) return { findings: compatFindings(ctx), repairs: [] };
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
