// `--limits <file.json>` on the program and `warrant limits` (docs/guide/limits.md, "Limits"), with
// the built program: a second run over the limit is denied with the limit's reason, the counters
// show what was used, and a bad limits file is exit 2 naming the problem.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';

const MAIN = resolve(import.meta.dirname, '../../../dist/esm/cli/main.js');
const directory = mkdtempSync(join(tmpdir(), 'warrant-limits-cli-'));
after(() => rmSync(directory, { recursive: true, force: true }));

const exec = promisify(execFile);

async function warrant(...args: string[]) {
  try {
    const { stdout, stderr } = await exec(process.execPath, [MAIN, ...args], { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

describe('warrant --limits and warrant limits', () => {
  it('denies the run over the limit and shows the counter', async () => {
    const store = `sqlite:${join(directory, 'jobs.db')}`;
    const limits = join(directory, 'limits.json');
    writeFileSync(
      limits,
      JSON.stringify([
        {
          name: 'echoes',
          match: { capability: 'system.echo' },
          per: 'global',
          max: 1,
          windowMs: 3_600_000,
        },
      ]),
    );
    const plan = join(directory, 'plan.json');
    writeFileSync(
      plan,
      JSON.stringify({
        version: '1.0',
        steps: [{ id: 'a', capability: 'system.echo', input: { message: 'hi' } }],
      }),
    );
    const first = await warrant('run', plan, '--store', store, '--limits', limits);
    assert.equal(first.code, 0, first.stderr);
    const second = await warrant('run', plan, '--store', store, '--limits', limits);
    assert.equal(second.code, 1);
    assert.match(second.stderr + second.stdout, /limit echoes: 2\/1 in 1h/);

    const listed = await warrant('limits', '--store', store, '--limits', limits, '--json');
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout).counters, [
      { limit: 'echoes', per: 'global', used: 1, max: 1, windowMs: 3_600_000 },
    ]);
    const table = await warrant('limits', '--store', store);
    assert.match(table.stdout, /^LIMIT +PER +TENANT +CALLER +USED +MAX +WINDOW\n/);
    assert.match(table.stdout, /echoes +global +1 +1h/);
  });

  it('refuses a bad limits file with exit 2 naming the problem', async () => {
    const store = `sqlite:${join(directory, 'bad.db')}`;
    const bad = join(directory, 'bad.json');
    writeFileSync(bad, JSON.stringify([{ name: 'x', per: 'everyone', max: 1, windowMs: 1000 }]));
    const refused = await warrant('limits', '--store', store, '--limits', bad);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /--limits .*bad\.json: limits\[0\]\.per must be "caller", "actor", "tenant" or "global", got "everyone"/,
    );
    writeFileSync(bad, '[{');
    const notJson = await warrant('serve', '--store', store, '--limits', bad);
    assert.equal(notJson.code, 2);
    assert.match(notJson.stderr, /--limits .*bad\.json: not JSON/);
    const missing = await warrant(
      'serve',
      '--store',
      store,
      '--limits',
      join(directory, 'none.json'),
    );
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--limits .*none\.json: cannot read it/);
  });
});
