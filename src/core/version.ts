// The package version, read once from package.json (one level above both src/ and dist/).
import { readFileSync } from "node:fs";

let cached: string | undefined;

export function toolVersion(): string {
  if (cached === undefined) {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    cached = pkg.version;
  }
  return cached;
}
