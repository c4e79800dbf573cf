#!/usr/bin/env node
// The `warrant` executable. The commands of API.md §11 (run, serve, mcp, jobs, capabilities)
// arrive with the program issue; until then it says so instead of pretending to work.
console.error(
  'warrant 0.2.0: the command-line program is not available in this build yet.\n' +
    'Use the library: import { OperatorRuntime } from "warrant" (see README.md).',
);
process.exitCode = 2;
