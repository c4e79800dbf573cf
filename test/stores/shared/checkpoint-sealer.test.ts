import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { OperatorRuntime } from '../../../src/index.js';
import {
  CheckpointSealer,
  SEAL_EVERY_EVENTS,
  SEAL_EVERY_MS,
} from '../../../src/stores/shared/checkpoint-sealer.js';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';
import { within } from '../../support/wait.js';
import { TS_LOADER } from '../../support/ts-loader.js';

/** A sealer whose seals are counted; `sealed` resolves at the next seal. */
function countingSealer(fail = false) {
  let seals = 0;
  let next: () => void = () => {};
  const sealer = new CheckpointSealer(() => {
    seals++;
    next();
    if (fail) throw new Error('busy');
  });
  return {
    sealer,
    seals: () => seals,
    sealed: () =>
      new Promise<void>((resolve) => {
        next = resolve;
      }),
  };
}

describe('CheckpointSealer', () => {
  it('seals about a second after a commit, once for the commits of that second', async () => {
    const { sealer, seals, sealed } = countingSealer();
    const started = Date.now();
    const first = sealed();
    sealer.committed(3);
    sealer.committed(4);
    // (The sealer's timer does not keep the process alive; this bounded wait does.)
    await within(first, { what: 'the seal', timeoutMs: 5_000 });
    assert.ok(Date.now() - started >= SEAL_EVERY_MS - 50, 'not before the second is up');
    assert.equal(seals(), 1);
    sealer.stop();
  });

  it('seals at once when 1,000 events were committed, and never for a commit of none', (t) => {
    // The sealer's clock is the test's: "at once" is the next timer turn, not a time measured.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { sealer, seals } = countingSealer();
    sealer.committed(0);
    assert.equal(sealer.stop(), false, 'nothing pending');
    sealer.committed(SEAL_EVERY_EVENTS - 1);
    t.mock.timers.tick(0);
    assert.equal(seals(), 0, 'one event short: the second is waited for');
    sealer.committed(1);
    t.mock.timers.tick(0);
    assert.equal(seals(), 1, 'without waiting for the second');
    t.mock.timers.tick(SEAL_EVERY_MS);
    assert.equal(seals(), 1, 'the second, once up, has nothing left to seal');
    sealer.stop();
  });

  it('seals what is pending at close, and keeps a failed seal pending', async () => {
    const failing = countingSealer(true);
    failing.sealer.committed(2);
    await failing.sealer.run();
    assert.equal(failing.seals(), 1);
    assert.equal(failing.sealer.stop(), true, 'still pending after a failed seal');
    const { sealer, seals } = countingSealer();
    sealer.committed(2);
    await sealer.close();
    assert.equal(seals(), 1);
    await sealer.close();
    assert.equal(seals(), 1, 'nothing left to seal');
  });
});

const workers = (store: string) =>
  ['a', 'b'].map((worker) =>
    spawn(
      process.execPath,
      [...TS_LOADER, 'test/stores/fixtures/checkpoint-worker.ts', store, worker, '60'],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    ),
  );

/** Two processes sealing one store as they write: one unbroken chain sealing every event. */
async function neverFork(store: string): Promise<void> {
  const children = workers(store);
  const codes = await Promise.all(children.map(async (child) => (await once(child, 'exit'))[0]));
  assert.deepEqual(codes, [0, 0]);
  const runtime = new OperatorRuntime({ store });
  try {
    const verification = await runtime.verifyStore();
    assert.deepEqual(verification.problems, []);
    assert.equal(verification.jobs, 120);
    assert.equal(verification.unsealed, 0);
    const events = (await runtime.listJobs()).reduce((sum, job) => sum + job.events.length, 0);
    assert.equal(verification.sealedEvents, events, 'every event sealed exactly once');
    assert.ok(verification.checkpoints > 10, `several checkpoints (${verification.checkpoints})`);
  } finally {
    await runtime.close();
  }
}

describe('two processes sealing one store', () => {
  let postgres: TestPostgres | undefined;
  after(async () => {
    await postgres?.stop();
  });

  it('SQLite: never fork the checkpoint chain', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'warrant-seal-')), 'jobs.db');
    // Created first, so the two processes do not race to create the schema.
    const setup = new OperatorRuntime({ store: `sqlite:${file}` });
    await setup.listJobs();
    await setup.close();
    await neverFork(`sqlite:${file}`);
  });

  it('PostgreSQL: never fork the checkpoint chain', async () => {
    postgres = await startTestPostgres();
    await neverFork(await postgres.createDatabase());
  });
});
