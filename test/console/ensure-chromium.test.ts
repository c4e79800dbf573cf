// `npm test` makes Chromium available itself (CONTRIBUTING.md, "The console tests"): its pretest
// runs scripts/ensure-chromium.mjs, which finds a browser, installs Debian's as root with apt-get,
// or says in one line how to get one, and never fails the run by itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';

const script = resolve('scripts/ensure-chromium.mjs');

function ensure(env: Record<string, string>) {
  return spawnSync(process.execPath, [script], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, ...env },
  });
}

describe('scripts/ensure-chromium.mjs', () => {
  it("is part of npm test's pretest", () => {
    const { scripts } = JSON.parse(readFileSync(resolve('package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    assert.match(scripts.pretest ?? '', /node scripts\/ensure-chromium\.mjs/);
  });

  it('says nothing when the named browser exists', () => {
    const found = ensure({ WARRANT_CHROMIUM: process.execPath });
    assert.equal(found.status, 0);
    assert.equal(found.stderr, '');
  });

  it('says how in one line, and exits 0, when the named browser is missing', () => {
    const missing = ensure({ WARRANT_CHROMIUM: '/no/such/chromium' });
    assert.equal(missing.status, 0);
    assert.equal(missing.stderr.trim().split('\n').length, 1, missing.stderr);
    assert.match(missing.stderr, /apt-get install chromium.*WARRANT_CHROMIUM/);
  });
});
