import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applicationVersion } from '../../src/workers/app-version.js';

describe('applicationVersion', () => {
  const a = { name: 'fs.read', version: '1.0.0' };
  const b = { name: 'fs.write', version: '2.1.0' };

  it('is the same for the same capabilities in any order', () => {
    assert.equal(applicationVersion([a, b]), applicationVersion([b, a]));
    assert.match(applicationVersion([a, b]), /^warrant-[0-9a-f]{16}$/);
  });

  it('changes with a capability, a version or the policy', () => {
    const base = applicationVersion([a, b]);
    assert.notEqual(applicationVersion([a]), base);
    assert.notEqual(applicationVersion([a, { ...b, version: '2.1.1' }]), base);
    assert.notEqual(applicationVersion([a, b], 'sha256:00'), base);
    assert.notEqual(
      applicationVersion([a, b], 'sha256:00'),
      applicationVersion([a, b], 'sha256:01'),
    );
  });

  it('does not confuse a name boundary with a version', () => {
    assert.notEqual(
      applicationVersion([{ name: 'x', version: '1@y' }]),
      applicationVersion([{ name: 'x@1', version: 'y' }]),
    );
  });
});
