// Every example runs as users would run it (they import only 'warrant'), so the docs cannot rot.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

function runExample(file: string): string {
  const child = spawnSync(process.execPath, ['--import', 'tsx', `examples/${file}`], {
    encoding: 'utf8',
  });
  assert.equal(child.status, 0, `examples/${file} failed:\n${child.stderr}`);
  return child.stdout;
}

describe('examples/', () => {
  it('quickstart.ts runs a referencing plan, shows the default denial and an admission rejection', () => {
    const out = runExample('quickstart.ts');
    assert.match(
      out,
      /With the default policy: job failed: Write capability requires explicit approval\./,
    );
    assert.match(out, /With an authorizer granting mail:send: job completed/);
    assert.match(out, /"to":"ada@example.com"/);
    assert.match(out, /DUPLICATE_STEP_ID/);
  });

  it('scoped-authorizer.ts denies a caller without the scope and allows one with it', () => {
    assert.equal(
      runExample('scoped-authorizer.ts'),
      'intern: failed (mail.send needs a scope this caller lacks)\nops: completed\n',
    );
  });

  it('audit-observer.ts writes one audit line per event and survives a failing observer', () => {
    const out = runExample('audit-observer.ts');
    const audit = out.split('\n').filter((line) => line.startsWith('audit '));
    assert.deepEqual(
      audit.map((line) => line.split(' ')[3]),
      [
        'job.created',
        'execution.started',
        'capability.started',
        'capability.completed',
        'capability.denied',
        'job.failed',
      ],
    );
    assert.match(out, /observer failed \(ignored\): Error: pager unavailable/);
  });

  it('introspection-selection.ts selects from listCapabilities() and runs the pinned version', () => {
    const out = runExample('introspection-selection.ts');
    assert.match(out, /selected user\.lookup@1\.0\.0/);
    assert.match(out, /job completed: \{"id":"ada"/);
  });

  it('workers/work.mjs is written with createCapability: it runs, and logs its lifecycle', () => {
    // As `warrant run --module` loads it; the lifecycle lines are createCapability's own.
    const script = `
      import { OperatorRuntime } from 'warrant';
      import work from './examples/workers/work.mjs';
      const lines = [];
      const log = (message, fields) => lines.push(message + ' ' + fields.capability);
      const runtime = new OperatorRuntime({ logger: { debug: log, info: log, warn: log, error: log } }).use(work);
      const job = await runtime.executePlan({ version: '1.0', steps: [{ id: 's', capability: 'work.step', input: { ms: 1 } }] });
      console.log(job.status, typeof job.result.pid, lines.join(','));
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(child.status, 0, child.stderr);
    assert.equal(
      child.stdout,
      'completed number capability started work.step,capability completed work.step\n',
    );
  });
});
