// The SQLite driver chosen for this Node.js (docs/decisions.md, "Node versions"): better-sqlite3
// 12 on Node 20, its Node-API build 13 (the optional `better-sqlite3-node22`) on Node 22 and
// later. On Node 24, better-sqlite3 12 aborted the process whenever the collector destroyed a
// prepared statement (`Statement::~Statement()`, the `(env) != nullptr` assertion); the second
// test is that abort, run on whichever Node.js runs the suite (CI runs it on 20, 22 and 24).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SQLITE_DRIVER } from '../../../src/stores/sqlite/sqlite-driver.cjs';
import { TS_LOADER } from '../../support/ts-loader.js';

const major = Number(process.versions.node.split('.')[0]);
const repo = join(import.meta.dirname, '../../..');

/** The TypeScript files under `dir` (a folder of the repository), never inside node_modules. */
function sources(dir: string): string[] {
  return readdirSync(join(repo, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return /\.[cm]?ts$/.test(entry.name) ? [join(repo, path)] : [];
  });
}

describe('SQLite driver', () => {
  it('is better-sqlite3 on Node 20 and its Node-API build on Node 22 and later', () => {
    assert.equal(SQLITE_DRIVER, major >= 22 ? 'better-sqlite3-node22' : 'better-sqlite3');
  });

  it('is the only way tests, benches, examples and scripts open SQLite', () => {
    // Two builds of SQLite in one process (12 through the package name, 13 through the driver on
    // Node 22 and later) each keep their own locks and WAL index of a file: a store's connection
    // then kept reading a snapshot taken before another connection's writes (Node 24 only).
    const direct = ['src', 'test', 'bench', 'examples', 'scripts', 'tools']
      .flatMap(sources)
      .filter((path) => !path.endsWith('sqlite-driver.cts'))
      .filter((path) =>
        /^\s*import\s+(?!type\b)[^;]*from\s+'better-sqlite3(-node22)?'|require\('better-sqlite3/m.test(
          readFileSync(path, 'utf8'),
        ),
      )
      .map((path) => path.slice(repo.length + 1));
    assert.deepEqual(direct, [], 'open SQLite with src/stores/sqlite/sqlite-driver.cts');
  });

  it('a process that prepares and drops statements, collects them and exits, exits 0', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warrant-driver-'));
    try {
      // Statements the store prepares are dropped by their last reference: the listJobs queries
      // for filters seen once, and the store itself after close. Collected by forced and idle
      // collections, then again at exit.
      const script = `
        import { OperatorRuntime, createCapability, defineModule } from './src/index.ts';
        // The inventory is process-global: registered once, seen by every runtime.
        new OperatorRuntime().use(defineModule('test', '1.0.0', [createCapability({
          name: 'test.echo', version: '1.0.0', risk: 'read', description: 'Echoes',
          inputSchema: { message: { type: 'string', required: true, description: 'Text' } },
          execute: ({ input }) => ({ message: input.message }),
        })]));
        for (let round = 0; round < 3; round++) {
          const runtime = new OperatorRuntime({ store: 'sqlite:${join(dir, 'jobs.db')}' });
          const job = await runtime.executePlan({
            version: '1.0', goal: 'driver', steps: [{ id: 's', capability: 'test.echo', input: { message: 'hi' } }],
          });
          if (job.status !== 'completed') throw new Error(job.status);
          for (let i = 0; i < 20; i++) await runtime.listJobs({ goal: 'g' + i + round });
          await runtime.close();
          globalThis.gc();
          await new Promise((resolve) => setTimeout(resolve, 50));
          globalThis.gc();
        }
        console.log('done');
      `;
      const child = spawnSync(
        process.execPath,
        ['--expose-gc', ...TS_LOADER, '--input-type=module', '-e', script],
        { cwd: join(import.meta.dirname, '../../..'), encoding: 'utf8', timeout: 60_000 },
      );
      assert.equal(child.error, undefined);
      assert.equal(child.signal, null, child.stderr);
      assert.equal(child.status, 0, child.stderr);
      assert.equal(child.stdout.trim(), 'done');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
