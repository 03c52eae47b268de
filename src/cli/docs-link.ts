// Where help sends readers: the docs shipped inside the package (there is no published repository URL to link).
import { fileURLToPath } from "node:url";

/**
 * The absolute path of a shipped doc, e.g. `docsLink("cli.md")` → `/usr/lib/node_modules/openclaw-state/docs/cli.md`.
 * Resolved from this module (dist/cli/ or src/cli/), so it is right for a global install, a clone and `npx`.
 */
export function docsLink(file: string): string {
  return fileURLToPath(new URL(`../../docs/${file}`, import.meta.url));
}
