// Crash safety (issue 4): SIGKILL a process mid-step; every job it created is on disk with the
// last recorded state of each step, and the database passes PRAGMA integrity_check.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Database } from '../../../src/stores/sqlite/sqlite-driver.cjs';
import { SqliteJobStore } from '../../../src/stores/sqlite/sqlite-store.js';
import { TS_LOADER } from '../../support/ts-loader.js';

describe('SQLite store after SIGKILL', () => {
  it('keeps every created job with its last recorded step states, and passes integrity_check', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'warrant-crash-')), 'jobs.db');
    const child = spawn(
      process.execPath,
      [...TS_LOADER, 'test/stores/fixtures/crash-child.ts', file],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const created: string[] = [];
    let hanging: string | undefined;
    child.stdout.setEncoding('utf8');
    let buffer = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        buffer += chunk;
        const lines = buffer.split('\n');
        buffer = lines.pop() ?? '';
        for (const line of lines) {
          const [kind, jobId, stepId] = line.split(' ');
          if (kind === 'created') created.push(jobId as string);
          if (kind === 'started' && stepId === 'two' && created.length === 30) {
            hanging = jobId;
            resolve();
          }
        }
      });
      child.once('exit', (code) => reject(new Error(`child exited early with ${String(code)}`)));
    });
    child.kill('SIGKILL');
    const [, signal] = await once(child, 'exit');
    assert.equal(signal, 'SIGKILL');

    const db = new Database(file);
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    db.close();
    const store = new SqliteJobStore(file);
    try {
      assert.equal(created.length, 30);
      const jobs = store.list({});
      assert.equal(jobs.length, 30);
      assert.deepEqual(new Set(jobs.map((job) => job.id)), new Set(created));
      for (const id of created.slice(0, 29)) {
        const job = store.get(id);
        assert.equal(job?.status, 'completed', id);
        assert.deepEqual(
          job?.steps.map((step) => step.status),
          ['completed', 'completed', 'completed'],
        );
        assert.equal(job?.events.at(-1)?.type, 'job.completed');
      }
      const cut = store.get(hanging as string);
      assert.equal(cut?.status, 'executing');
      assert.deepEqual(
        cut?.steps.map((step) => step.status),
        ['completed', 'running', 'pending'],
      );
      assert.equal(cut?.events.at(-1)?.type, 'capability.started');
      assert.equal(typeof cut?.steps[1]?.startedAt, 'string');
    } finally {
      store.close();
    }
  });
});
