import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSystemModule } from '../../src/builtins/system-module.js';
import { OperatorRuntime } from '../../src/index.js';

describe('builtin system module', () => {
  it('echoes through a governed plan and reports its status', async () => {
    const runtime = new OperatorRuntime();
    runtime.use(createSystemModule());
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [
        { id: 'echo', capability: 'system.echo', input: { message: 'hi' } },
        { id: 'status', capability: 'system.status' },
      ],
    });
    assert.equal(job.status, 'completed');
    const [echo, status] = job.result as [
      { message: string; at: string },
      { provider: string; ready: boolean; node: string },
    ];
    assert.equal(echo.message, 'hi');
    assert.ok(!Number.isNaN(Date.parse(echo.at)));
    assert.equal(status.provider, 'system');
    assert.equal(status.node, process.version);
  });
});
