// The process entry point: the single place that sets the exit code.
import { installInterruptReporting } from "./interrupt.js";
import { runCli } from "./run-cli.js";

installInterruptReporting(process.stderr, process.env);
process.exitCode = await runCli({ argv: process.argv.slice(2) });
