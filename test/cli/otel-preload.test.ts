// docs/guide/telemetry.md, "From the program", the program: `node --import ./otel.mjs
// .../cli/main.js run` (or NODE_OPTIONS="--import ./otel.mjs" warrant ...) registers a provider
// before the program starts, and the job and its steps are exported as spans.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const bin = resolve('dist/esm/cli/main.js');
const preload = resolve('test/cli/fixtures/otel-preload.mjs');

describe('OpenTelemetry from the program', () => {
  it('a provider preloaded with node --import gets the spans of warrant run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warrant-otel-'));
    const plan = join(dir, 'plan.json');
    const spans = join(dir, 'spans.jsonl');
    writeFileSync(
      plan,
      JSON.stringify({
        version: '1.0',
        steps: [{ id: 'hello', capability: 'system.echo', input: { message: 'hi' } }],
      }),
    );
    const run = spawnSync(
      process.execPath,
      ['--import', preload, bin, 'run', plan, '--store', 'memory'],
      { encoding: 'utf8', timeout: 60_000, env: { ...process.env, OTEL_TEST_FILE: spans } },
    );
    assert.equal(run.status, 0, run.stderr);
    assert.ok(existsSync(spans), 'no span was exported');
    const exported = readFileSync(spans, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { name: string; traceId: string });
    const job = exported.find((span) => span.name === 'warrant.job');
    const step = exported.find((span) => span.name === 'execute_tool system.echo');
    assert.ok(job !== undefined && step !== undefined, JSON.stringify(exported));
    assert.equal(step.traceId, job.traceId);
  });
});
