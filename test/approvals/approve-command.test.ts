import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approveCommandLine, shellWord } from '../../src/approvals/approve-command.js';

describe('approveCommandLine', () => {
  it('keeps plain words bare and quotes the others so the shell reads them back exactly', () => {
    assert.equal(shellWord('sqlite:jobs.db'), 'sqlite:jobs.db');
    assert.equal(shellWord("a b's"), `'a b'\\''s'`);
    assert.equal(shellWord('line\nbreak'), `$'line\\nbreak'`);
    assert.equal(shellWord('\u202eevil'), `$'\\u202eevil'`);
  });

  it('puts the ids after -- when one starts with a dash, so it is never read as an option', () => {
    assert.equal(
      approveCommandLine('job-1', 'write', 'sha256:ab', ['--fs-root', '/tmp/x y']),
      `warrant approvals approve job-1 write --digest sha256:ab --fs-root '/tmp/x y'`,
    );
    assert.equal(
      approveCommandLine('job-1', '--help', 'sha256:ab', []),
      'warrant approvals approve --digest sha256:ab -- job-1 --help',
    );
  });
});
