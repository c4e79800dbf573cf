// Loaded into every test process (scripts/run-tests.mjs): an unhandled rejection anywhere in
// the suite fails the run, even if a test installed its own handler that would swallow it.
const seen: unknown[] = [];
process.on('unhandledRejection', (reason) => {
  seen.push(reason);
  console.error('unhandledRejection in test process:', reason);
});
process.on('exit', () => {
  if (seen.length > 0) process.exitCode = 1;
});
