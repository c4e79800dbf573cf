import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  LifecycleLoggingMiddleware,
  createCapability,
  type ExecutionContext,
} from '../../src/index.js';
import { silentLogger } from '../../src/capabilities/lifecycle-logging-middleware.js';

function recorder() {
  const lines: [string, string, Record<string, unknown> | undefined][] = [];
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    lines.push([level, message, fields]);
  const context: ExecutionContext = {
    jobId: 'job-1',
    stepId: 'step-1',
    caller: undefined,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    signal: new AbortController().signal,
  };
  return { lines, context };
}

describe('LifecycleLoggingMiddleware', () => {
  it("only calls next() with the runtime's default silent logger", async () => {
    const { context } = recorder();
    const silent = { ...context, logger: silentLogger };
    const outcome = Promise.resolve('ok');
    let calls = 0;
    const middleware = new LifecycleLoggingMiddleware();
    const returned = middleware.execute(
      {
        input: {},
        context: silent,
        capability: { name: 'log.silent', version: '1', risk: 'read' },
      },
      () => {
        calls++;
        return outcome;
      },
    );
    assert.equal(returned, outcome, 'no wrapper promise, no bookkeeping');
    assert.equal(await returned, 'ok');
    assert.equal(calls, 1);
  });

  it('logs start (debug) and completion (info) with ids and duration', async () => {
    const { lines, context } = recorder();
    const capability = createCapability({
      name: 'log.ok',
      version: '3',
      description: 'd',
      risk: 'read',
      execute: () => 'ok',
    });
    assert.equal(await capability.execute({}, context), 'ok');
    assert.deepEqual(
      lines.map(([level, message]) => `${level} ${message}`),
      ['debug capability started', 'info capability completed'],
    );
    assert.deepEqual(lines[0]?.[2], {
      capability: 'log.ok',
      version: '3',
      jobId: 'job-1',
      stepId: 'step-1',
    });
    assert.equal(typeof lines[1]?.[2]?.durationMs, 'number');
  });

  it('logs failure (warn) with the error message and rethrows', async () => {
    const { lines, context } = recorder();
    const middleware = new LifecycleLoggingMiddleware();
    await assert.rejects(
      middleware.execute(
        { input: {}, context, capability: { name: 'log.bad', version: '1', risk: 'read' } },
        () => Promise.reject(new Error('broken')),
      ),
      /broken/,
    );
    assert.equal(lines[1]?.[0], 'warn');
    assert.equal(lines[1]?.[1], 'capability failed');
    assert.equal(lines[1]?.[2]?.error, 'broken');
  });

  it('is off with lifecycleLogging: false', async () => {
    const { lines, context } = recorder();
    const capability = createCapability({
      name: 'log.off',
      version: '1',
      description: 'd',
      risk: 'read',
      lifecycleLogging: false,
      execute: () => 1,
    });
    await capability.execute({}, context);
    assert.deepEqual(lines, []);
  });
});
