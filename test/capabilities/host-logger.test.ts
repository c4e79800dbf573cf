// The runtime's `logger` in either order (docs/api.md, "Loggers"; docs/decisions.md, "Loggers"):
// a real pino logger keeps every field, and a message-first logger gets pino-order calls as
// (message, fields).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import {
  OperatorRuntime,
  type ExecutionContext,
  type FieldsFirstLogger,
  type OperatorRuntimeOptions,
} from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

const allowAll = { authorize: () => ({ decision: 'allow' as const }) };

/** A pino logger at debug level writing JSON lines to a stream the test reads back. */
function pinoLines() {
  const lines: Record<string, unknown>[] = [];
  const stream = {
    write(chunk: string) {
      lines.push(JSON.parse(chunk) as Record<string, unknown>);
    },
  };
  const logger = pino({ level: 'debug', base: undefined, timestamp: false }, stream);
  return { logger, lines };
}

/** Logs once in each order from inside a capability, with lifecycle logging on. */
async function runLogging(logger: OperatorRuntimeOptions['logger']) {
  const runtime = new OperatorRuntime({ authorizer: allowAll, logger });
  const [name] = register(runtime, {
    lifecycleLogging: true,
    execute: ({ context }: { context: ExecutionContext }) => {
      context.logger.info('message first', { a: 1 });
      // pino's order, as code written for pino calls it.
      (context.logger as unknown as FieldsFirstLogger).warn({ b: 2 }, 'fields first');
      context.logger.debug('no fields');
      return 'done';
    },
  });
  const job = await runtime.executePlan({
    version: '1.0',
    steps: [{ id: 'step-1', capability: name as string }],
  });
  assert.equal(job.status, 'completed');
  return { name: name as string, job };
}

describe('logger option: pino', () => {
  it('keeps every field of the lifecycle lines and of both call orders', async () => {
    const { logger, lines } = pinoLines();
    const { name, job } = await runLogging(logger);
    const ids = { capability: name, version: '1.0.0', jobId: job.id, stepId: 'step-1' };
    assert.deepEqual(
      lines.map(({ durationMs, ...line }) => {
        if (line.msg === 'capability completed') {
          assert.equal(typeof durationMs, 'number');
          // Rounded to the microsecond: no float noise such as 0.7845220000001518.
          assert.equal(durationMs, Math.round((durationMs as number) * 1000) / 1000);
          assert.ok((String(durationMs).split('.')[1]?.length ?? 0) <= 3, String(durationMs));
        }
        return line;
      }),
      [
        { level: 20, msg: 'capability started', ...ids },
        // A capability's own lines carry its job and step, in both call orders.
        { level: 30, msg: 'message first', a: 1, jobId: job.id, stepId: 'step-1' },
        { level: 40, msg: 'fields first', b: 2, jobId: job.id, stepId: 'step-1' },
        { level: 20, msg: 'no fields', jobId: job.id, stepId: 'step-1' },
        { level: 30, msg: 'capability completed', ...ids },
      ],
    );
  });

  it('a child logger is pino too: its bindings and the fields both land', async () => {
    const { logger, lines } = pinoLines();
    const { job } = await runLogging(logger.child({ component: 'agent' }));
    const line = lines.find((entry) => entry.msg === 'message first');
    assert.deepEqual(line, {
      level: 30,
      component: 'agent',
      msg: 'message first',
      a: 1,
      jobId: job.id,
      stepId: 'step-1',
    });
  });

  it("follows the pino logger's level as it changes", async () => {
    const { logger, lines } = pinoLines();
    const runtime = new OperatorRuntime({ authorizer: allowAll, logger });
    const [name] = register(runtime, {
      execute: ({ context }: { context: ExecutionContext }) => {
        context.logger.debug('hidden', { a: 1 });
        context.logger.warn('shown', { a: 2 });
      },
    });
    logger.level = 'warn';
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: name as string }],
    });
    assert.deepEqual(lines, [{ level: 40, msg: 'shown', a: 2, jobId: job.id, stepId: 's' }]);
  });
});

describe('logger option: message first', () => {
  it('gets every call as (message, fields), whichever order the caller used', async () => {
    const calls: unknown[][] = [];
    const record =
      (level: string) =>
      (...args: unknown[]) =>
        calls.push([level, ...args]);
    const logger = {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    };
    const { name, job } = await runLogging(logger);
    const ids = { capability: name, version: '1.0.0', jobId: job.id, stepId: 'step-1' };
    assert.deepEqual(
      calls.map((call) => (call[1] === 'capability completed' ? call.slice(0, 2) : call)),
      [
        ['debug', 'capability started', ids],
        ['info', 'message first', { a: 1, jobId: job.id, stepId: 'step-1' }],
        ['warn', 'fields first', { b: 2, jobId: job.id, stepId: 'step-1' }],
        ['debug', 'no fields', { jobId: job.id, stepId: 'step-1' }],
        ['info', 'capability completed'],
      ],
    );
  });
});

describe('the step logger', () => {
  it("keeps the runtime's jobId and stepId over ones a capability gives", async () => {
    const calls: unknown[][] = [];
    const record =
      (level: string) =>
      (...args: unknown[]) =>
        calls.push([level, ...args]);
    const logger = {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    };
    const runtime = new OperatorRuntime({ authorizer: allowAll, logger });
    const [name] = register(runtime, {
      execute: ({ context }: { context: ExecutionContext }) => {
        context.logger.error('spoof', { jobId: 'other', stepId: 'other', n: 1 });
      },
    });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'real', capability: name as string }],
    });
    assert.deepEqual(
      calls.find((call) => call[1] === 'spoof'),
      ['error', 'spoof', { jobId: job.id, stepId: 'real', n: 1 }],
    );
  });
});
