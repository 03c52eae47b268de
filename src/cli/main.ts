// The process entry point: the single place that sets the exit code.
import { runCli } from "./run-cli.js";

process.exitCode = await runCli({ argv: process.argv.slice(2) });
