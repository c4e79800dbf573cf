// The DBOS queue's options (docs/api.md, "Workers"): `queue: { engine }` is checked when the
// runtime is made, `startWorker(options)` when it is called, before anything loads or connects.
// Workers themselves run in test/cli/commands/worker.test.ts and test/workers/.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostname } from 'node:os';
import { OperatorRuntime } from '../../src/index.js';
import { readWorkerOptions } from '../../src/runtime/dbos-queue.js';

const invalid = { code: 'RUNTIME_OPTIONS_INVALID' };

describe("queue: { engine: 'dbos' }", () => {
  it('needs a PostgreSQL store and a known engine', () => {
    assert.throws(() => new OperatorRuntime({ queue: { engine: 'dbos' } }), invalid);
    assert.throws(
      () => new OperatorRuntime({ store: 'sqlite::memory:', queue: { engine: 'dbos' } }),
      invalid,
    );
    assert.throws(
      () => new OperatorRuntime({ store: 'postgres://db/x', queue: { engine: 'kafka' as 'dbos' } }),
      { code: 'RUNTIME_OPTIONS_INVALID', message: /'local' or 'dbos'/ },
    );
    // Made, not opened: nothing connects until it is used.
    assert.doesNotThrow(
      () => new OperatorRuntime({ store: 'postgres://db/x', queue: { engine: 'dbos' } }),
    );
    assert.doesNotThrow(() => new OperatorRuntime({ queue: { engine: 'local' } }));
  });

  it('startWorker() refuses a runtime without it', async () => {
    const runtime = new OperatorRuntime();
    try {
      await assert.rejects(runtime.startWorker(), { ...invalid, message: /engine: 'dbos'/ });
    } finally {
      await runtime.close();
    }
  });
});

describe('readWorkerOptions(options)', () => {
  it('takes an id, a concurrency from 1 to 1000 (default the queue’s) and a version', () => {
    assert.deepEqual(readWorkerOptions({}, 4), { concurrency: 4, id: hostname() });
    assert.deepEqual(readWorkerOptions({ id: 'w1', concurrency: 8, version: 'sha256:ab' }, 4), {
      id: 'w1',
      concurrency: 8,
      version: 'sha256:ab',
    });
  });

  it('refuses anything else, naming the option', () => {
    for (const [options, field] of [
      [null, 'options must be an object'],
      [{ id: '' }, 'options.id'],
      [{ id: 'x'.repeat(201) }, 'options.id'],
      [{ id: 7 }, 'options.id'],
      [{ concurrency: 0 }, 'options.concurrency'],
      [{ concurrency: 1001 }, 'options.concurrency'],
      [{ concurrency: 1.5 }, 'options.concurrency'],
      [{ version: 3 }, 'options.version'],
    ] as const) {
      assert.throws(() => readWorkerOptions(options, 4), {
        ...invalid,
        message: new RegExp(field.replace('.', '\\.')),
      });
    }
  });
});
