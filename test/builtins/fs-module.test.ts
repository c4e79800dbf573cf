import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createFsModule, type FsModuleOptions } from '../../src/builtins/fs-module.js';
import { OperatorRuntime, type Capability } from '../../src/index.js';
import { testContext } from '../support/execution-context.js';
import { recordingAuthorizer } from '../support/runtime-fixtures.js';

const context = testContext();

function setup(lookup?: FsModuleOptions['lookup']) {
  const base = mkdtempSync(join(tmpdir(), 'warrant-fs-'));
  const root = join(base, 'root');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(root, 'note.txt'), 'inside');
  writeFileSync(join(root, 'sub', 'data.txt'), 'inside data');
  writeFileSync(join(base, 'secret.txt'), 'outside');
  writeFileSync(join(base, 'outside', 'data.txt'), 'outside data');
  symlinkSync(join(base, 'secret.txt'), join(root, 'escape.txt'));
  symlinkSync(base, join(root, 'escape-dir'));
  symlinkSync(join(root, 'note.txt'), join(root, 'alias.txt'));
  symlinkSync(join(root, 'sub'), join(root, 'sub-alias'));
  const module = createFsModule({ root, maxBytes: 64, ...(lookup ? { lookup } : {}) });
  const byName = (name: string) =>
    module.capabilities.find((capability) => capability.name === name) as Capability;
  return {
    base,
    root,
    read: byName('fs.read'),
    write: byName('fs.write'),
    status: byName('fs.status'),
  };
}

const run = (capability: Capability, input: Record<string, unknown>) =>
  Promise.resolve(capability.execute(input, context));

describe('builtin fs module', () => {
  it('declares fs.read (read), fs.write (write) and fs.status in its manifest', () => {
    const module = createFsModule({ root: '.' });
    assert.deepEqual(module.manifest.capabilities, ['fs.read', 'fs.write', 'fs.status']);
    assert.deepEqual(
      module.capabilities.map((capability) => capability.risk),
      ['read', 'write', 'read'],
    );
  });

  it('refuses an unknown lookup', () => {
    assert.throws(
      () => createFsModule({ root: '.', lookup: 'other' as FsModuleOptions['lookup'] }),
      /lookup must be 'proc' or 'path'/,
    );
  });

  it('reports its status', async () => {
    const { status, root } = setup();
    assert.deepEqual(await status.execute({}, context), { provider: 'fs', ready: true, root });
  });

  // Both ways of reaching a directory's entries (docs/decisions.md "Built-in capabilities")
  // keep the same rules.
  for (const lookup of ['proc', 'path'] as const) {
    describe(`through '${lookup}' lookups`, () => {
      it('reads files under the root, the path shown relative to it', async () => {
        const { read, root } = setup(lookup);
        assert.deepEqual(await run(read, { path: 'note.txt' }), {
          path: 'note.txt',
          size: 6,
          content: 'inside',
        });
        assert.deepEqual(await run(read, { path: join(root, 'sub', '.', 'data.txt') }), {
          path: 'sub/data.txt',
          size: 11,
          content: 'inside data',
        });
      });

      it('refuses traversal, absolute paths outside the root and NUL characters', async () => {
        const { read, base } = setup(lookup);
        for (const path of ['../secret.txt', 'sub/../../secret.txt', join(base, 'secret.txt')]) {
          await assert.rejects(run(read, { path }), /outside the fs root/, path);
        }
        await assert.rejects(run(read, { path: 'note.txt\0' }), /NUL character/);
      });

      it('follows no symbolic link, whether it leaves the root or stays inside', async () => {
        const { read, write, root, base } = setup(lookup);
        for (const path of [
          'escape.txt',
          'escape-dir/secret.txt',
          'alias.txt',
          'sub-alias/data.txt',
        ]) {
          await assert.rejects(
            run(read, { path }),
            /^Error: "[^"]+" is a symbolic link; fs capabilities follow none$/,
            path,
          );
          await assert.rejects(
            run(write, { path, content: 'pwned' }),
            /is a symbolic link; fs capabilities follow none/,
            path,
          );
        }
        await assert.rejects(
          run(write, { path: 'escape-dir/made/x.txt', content: 'x' }),
          /"escape-dir" is a symbolic link/,
        );
        assert.equal(existsSync(join(base, 'made')), false);
        assert.equal(readFileSync(join(base, 'secret.txt'), 'utf8'), 'outside');
        assert.equal(readFileSync(join(root, 'note.txt'), 'utf8'), 'inside');
        assert.equal(readFileSync(join(root, 'sub', 'data.txt'), 'utf8'), 'inside data');
      });

      it('refuses a file with more than one hard link, for reading and writing', async () => {
        const { read, write, root, base } = setup(lookup);
        writeFileSync(join(base, 'linked.txt'), 'outside linked');
        linkSync(join(base, 'linked.txt'), join(root, 'hard.txt'));
        await assert.rejects(
          run(read, { path: 'hard.txt' }),
          /^Error: "hard.txt" has 2 hard links; fs capabilities refuse files with more than one$/,
        );
        await assert.rejects(
          run(write, { path: 'hard.txt', content: 'pwned' }),
          /"hard.txt" has 2 hard links/,
        );
        assert.equal(readFileSync(join(base, 'linked.txt'), 'utf8'), 'outside linked');
      });

      it('refuses files over the size cap, directories and special files', async () => {
        const { read, write, root } = setup(lookup);
        writeFileSync(join(root, 'big.txt'), 'x'.repeat(65));
        await assert.rejects(run(read, { path: 'big.txt' }), /"big.txt" is larger than 64 bytes/);
        await assert.rejects(run(read, { path: 'sub' }), /"sub" is not a regular file/);
        await assert.rejects(run(read, { path: '.' }), /"\." is not a regular file/);
        await assert.rejects(run(write, { path: 'sub', content: 'x' }), /"sub" is not a regular/);
        await assert.rejects(run(write, { path: '' }), /"\." is not a regular file/);
        // A FIFO would block an open for reading or writing; it is refused, not waited on.
        execFileSync('mkfifo', [join(root, 'fifo')]);
        await assert.rejects(run(read, { path: 'fifo' }), /"fifo" is not a regular file/);
        await assert.rejects(run(write, { path: 'fifo', content: 'x' }), /"fifo"/);
      });

      it('writes under the root, creating parents, replacing what was there', async () => {
        const { write, root, base } = setup(lookup);
        assert.deepEqual(await run(write, { path: 'new/dir/out.txt', content: 'hé' }), {
          path: 'new/dir/out.txt',
          bytes: 3,
        });
        assert.equal(readFileSync(join(root, 'new/dir/out.txt'), 'utf8'), 'hé');
        await run(write, { path: 'note.txt', content: 'new' });
        assert.equal(readFileSync(join(root, 'note.txt'), 'utf8'), 'new');
        await assert.rejects(
          run(write, { path: '../made/x.txt', content: 'x' }),
          /outside the fs root/,
        );
        assert.equal(existsSync(join(base, 'made')), false);
      });

      it('shows paths relative to the root in every error, never the host path', async () => {
        const { read, write, root, base } = setup(lookup);
        const messages: string[] = [];
        const collect = (promise: Promise<unknown>) =>
          promise.then(
            () => assert.fail('expected a refusal'),
            (error: Error) => void messages.push(error.message),
          );
        await collect(run(read, { path: 'missing.txt' }));
        await collect(run(read, { path: join(root, 'sub', 'missing.txt') }));
        await collect(run(read, { path: 'note.txt/x' }));
        await collect(run(write, { path: 'note.txt/x', content: 'x' }));
        await collect(run(read, { path: `${'a'.repeat(300)}.txt` }));
        assert.deepEqual(messages, [
          '"missing.txt" does not exist',
          '"sub/missing.txt" does not exist',
          '"note.txt" is not a directory',
          '"note.txt" is not a directory',
          `Cannot open "${'a'.repeat(300)}.txt" (ENAMETOOLONG)`,
        ]);
        for (const message of messages) {
          assert.ok(!message.includes(base) && !message.includes('/proc/'), message);
        }
      });
    });
  }
});

/**
 * A directory swapped for a symbolic link between the checks and the open. The swap runs inside
 * the first `open`, `readFile` or `writeFile` of node:fs/promises that names the file itself, so
 * the race is hit on every run, whatever the implementation checks beforehand.
 */
describe('builtin fs module under a directory swap', () => {
  const fsPromises = createRequire(import.meta.url)('node:fs/promises') as Record<
    string,
    (...args: unknown[]) => unknown
  >;
  const originals = new Map<string, (...args: unknown[]) => unknown>();
  let swap: { file: string; run: () => void } | undefined;
  for (const name of ['open', 'readFile', 'writeFile']) {
    const original = fsPromises[name] as (...args: unknown[]) => unknown;
    originals.set(name, original);
    fsPromises[name] = (...args: unknown[]) => {
      const pending = swap;
      if (pending !== undefined && String(args[0]).endsWith(`/${pending.file}`)) {
        swap = undefined;
        pending.run();
      }
      return original(...args);
    };
  }
  syncBuiltinESMExports();
  after(() => {
    for (const [name, original] of originals) fsPromises[name] = original;
    syncBuiltinESMExports();
  });

  for (const lookup of ['proc', 'path'] as const) {
    describe(`through '${lookup}' lookups`, () => {
      it('writes nothing outside when the parent becomes a link to outside', async () => {
        const { write, root, base } = setup(lookup);
        swap = {
          file: 'out.txt',
          run: () => {
            renameSync(join(root, 'sub'), join(root, 'sub-moved'));
            symlinkSync(join(base, 'outside'), join(root, 'sub'));
          },
        };
        const outcome = run(write, { path: 'sub/out.txt', content: 'pwned' });
        if (lookup === 'proc') {
          // The write goes on in the directory that was opened, renamed but inside the root.
          await outcome;
          assert.equal(readFileSync(join(root, 'sub-moved', 'out.txt'), 'utf8'), 'pwned');
        } else {
          // By path the open went outside; the check on the descriptor refuses it.
          await assert.rejects(outcome, /"sub\/out.txt" left the fs root while it was opened/);
        }
        assert.equal(swap, undefined, 'the swap ran');
        assert.equal(existsSync(join(base, 'outside', 'out.txt')), false);
      });

      it('leaves nothing behind when the parent itself is moved out of the root', async () => {
        const { write, root, base } = setup(lookup);
        swap = {
          file: 'out.txt',
          run: () => {
            renameSync(join(root, 'sub'), join(base, 'moved'));
            symlinkSync(join(base, 'moved'), join(root, 'sub'));
          },
        };
        await assert.rejects(run(write, { path: 'sub/out.txt', content: 'pwned' }), /^Error: "sub/);
        assert.equal(swap, undefined, 'the swap ran');
        assert.equal(existsSync(join(base, 'moved', 'out.txt')), false);
      });

      it('reads nothing from outside when the parent becomes a link to outside', async () => {
        const { read, root, base } = setup(lookup);
        swap = {
          file: 'data.txt',
          run: () => {
            renameSync(join(root, 'sub'), join(root, 'sub-moved'));
            symlinkSync(join(base, 'outside'), join(root, 'sub'));
          },
        };
        const result = await run(read, { path: 'sub/data.txt' }).catch((error: Error) => error);
        assert.equal(swap, undefined, 'the swap ran');
        assert.notEqual((result as { content?: string }).content, 'outside data');
      });
    });
  }
});

/**
 * docs/api.md, "Prepared effects": through the runtime, fs.read and fs.write prepare the path as
 * resolved and the directory the open must find again; a link or another directory swapped in
 * after the decision (while the authorizer decides) is refused, nothing written anywhere.
 */
describe('builtin fs module through the runtime: the effect as prepared', () => {
  const { root, base } = setup();
  let during: (() => void) | undefined;
  const authorizer = recordingAuthorizer(() => {
    during?.();
    during = undefined;
    return { decision: 'allow' };
  });
  const runtime = new OperatorRuntime({ authorizer });
  runtime.use(createFsModule({ root, maxBytes: 64 }));
  after(() => runtime.close());

  const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
  const identity = (path: string) => {
    const info = statSync(path, { bigint: true });
    return { dev: String(info.dev), ino: String(info.ino) };
  };
  const step = (capability: string, input: Record<string, unknown>) =>
    runtime.executePlan({ version: '1.0', steps: [{ id: 's', capability, input }] });

  it('decides on the resolved path, the bytes and the content digest, and records them', async () => {
    const job = await step('fs.write', { path: 'sub/./out.txt', content: 'hé' });
    assert.equal(job.status, 'completed', job.error);
    const effect = {
      op: 'write',
      path: join(realpathSync(root), 'sub', 'out.txt'),
      bytes: 3,
      contentDigest: sha256('hé'),
      directory: { depth: 1, ...identity(join(root, 'sub')) },
    };
    assert.deepEqual(authorizer.calls.at(-1)?.effect, effect);
    assert.deepEqual((await runtime.getJob(job.id))?.steps[0]?.effect, effect);
    // Parents still to be created: the root is the directory found again.
    const made = await step('fs.write', { path: 'new/dir/x.txt', content: 'x' });
    assert.equal(made.status, 'completed', made.error);
    assert.deepEqual(authorizer.calls.at(-1)?.effect, {
      op: 'write',
      path: join(realpathSync(root), 'new', 'dir', 'x.txt'),
      bytes: 1,
      contentDigest: sha256('x'),
      directory: { depth: 0, ...identity(root) },
    });
    const read = await step('fs.read', { path: 'sub/data.txt' });
    assert.equal(read.status, 'completed', read.error);
    assert.deepEqual(authorizer.calls.at(-1)?.effect, {
      op: 'read',
      path: join(realpathSync(root), 'sub', 'data.txt'),
      directory: { depth: 1, ...identity(join(root, 'sub')) },
    });
  });

  it('refuses the write when a symbolic link is swapped in for the file after the decision', async () => {
    during = () => symlinkSync(join(base, 'secret.txt'), join(root, 'sub', 'swapped.txt'));
    const job = await step('fs.write', { path: 'sub/swapped.txt', content: 'pwned' });
    assert.equal(job.status, 'failed');
    assert.equal(job.error, '"sub/swapped.txt" is a symbolic link; fs capabilities follow none');
    assert.equal(job.steps[0]?.decision?.outcome, 'allow');
    assert.equal(
      (job.steps[0]?.effect as { path: string }).path,
      join(realpathSync(root), 'sub', 'swapped.txt'),
    );
    assert.equal(readFileSync(join(base, 'secret.txt'), 'utf8'), 'outside');
  });

  it('refuses when the parent directory is no longer the one prepared, or became a link', async () => {
    mkdirSync(join(root, 'moving'));
    during = () => {
      renameSync(join(root, 'moving'), join(root, 'moved'));
      mkdirSync(join(root, 'moving'));
    };
    const replaced = await step('fs.write', { path: 'moving/out.txt', content: 'x' });
    assert.equal(replaced.status, 'failed');
    assert.equal(
      replaced.error,
      '"moving" is no longer the directory it was when the step was prepared',
    );
    assert.equal(existsSync(join(root, 'moving', 'out.txt')), false);
    assert.equal(existsSync(join(root, 'moved', 'out.txt')), false);

    mkdirSync(join(root, 'linked'));
    during = () => {
      renameSync(join(root, 'linked'), join(root, 'linked-old'));
      symlinkSync(join(base, 'outside'), join(root, 'linked'));
    };
    const linked = await step('fs.write', { path: 'linked/out.txt', content: 'x' });
    assert.equal(linked.status, 'failed');
    assert.equal(linked.error, '"linked" is a symbolic link; fs capabilities follow none');
    assert.equal(existsSync(join(base, 'outside', 'out.txt')), false);
  });

  it('fails the step with EFFECT_PREPARE_FAILED for a path it refuses before any decision', async () => {
    const calls = authorizer.calls.length;
    const job = await step('fs.write', { path: 'escape-dir/x.txt', content: 'x' });
    assert.equal(
      job.error,
      'EFFECT_PREPARE_FAILED: "escape-dir" is a symbolic link; fs capabilities follow none',
    );
    assert.equal(authorizer.calls.length, calls);
  });
});
