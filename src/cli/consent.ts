// The one wording of "this needs consent and cannot ask": every destructive command refuses through it (exit 2).
import { ConsentRequiredError, UsageError } from "../core/errors.js";

/** Why no prompt is possible: the same three reasons wherever consent is refused. */
export const NO_PROMPT_REASONS = "no terminal, --json or --non-interactive";

export interface ConsentNeed {
  /** What would happen, as a sentence head naming the command: "backup prune would delete 3 archive(s) from /b". */
  what: string;
  /** The flags that would give consent (default `--yes`). */
  needs?: readonly string[];
  /** The command has --dry-run: the message points at it. */
  dryRun?: boolean;
}

/** `<what>: it needs consent and cannot ask for it here (…), so nothing was changed. Re-run with --yes[, or with --dry-run to see the plan].` */
export function consentMessage(need: ConsentNeed): string {
  const flags = (need.needs ?? ["--yes"]).join(" and ");
  return `${need.what}: it needs consent and cannot ask for it here (${NO_PROMPT_REASONS}), so nothing was changed. Re-run with ${flags}${need.dryRun ? ", or with --dry-run to see the plan" : ""}.`;
}

/** The refusal to throw (code `consent_required`, exit 2). */
export function consentRequired(need: ConsentNeed): ConsentRequiredError {
  return new ConsentRequiredError(consentMessage(need));
}

/** The same wording when a required choice (not only consent) is missing, under its own code (exit 2). */
export function choiceRequired(need: ConsentNeed, code: string): UsageError {
  return new UsageError(consentMessage(need), code);
}
