// The input types of createCapability, checked by the compiler on an example consumer
// (examples/typed-inputs.ts): inference from zod, valibot and inline field records with no
// cast, and @ts-expect-error lines for what must not compile (a wrong generic among them; an
// unused @ts-expect-error is itself an error, so this test fails if a wrong generic compiles).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const example = resolve('examples/typed-inputs.ts');

describe('createCapability input types (tsc on examples/typed-inputs.ts)', () => {
  it('compiles under strict with no cast, and refuses every @ts-expect-error line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warrant-types-'));
    try {
      const config = join(dir, 'tsconfig.json');
      writeFileSync(
        config,
        JSON.stringify({
          extends: resolve('tsconfig.json'),
          // Type packages are looked up from the config's folder unless told where they are.
          compilerOptions: { typeRoots: [resolve('node_modules/@types')] },
          include: [],
          files: [example],
        }),
      );
      const tsc = spawnSync(
        process.execPath,
        [resolve('node_modules/typescript/bin/tsc'), '-p', config, '--noEmit'],
        { encoding: 'utf8', timeout: 240_000 },
      );
      assert.equal(tsc.status, 0, `tsc failed:\n${tsc.stdout}${tsc.stderr}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs: both forms of schema check and hand over the typed input', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', example], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'completed ["PRINTER (first 10)",{"id":"T-1","verbose":false}]\n');
  });
});
