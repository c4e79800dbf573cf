import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_PLAN_VERSIONS,
  KNOWN_PLAN_VERSIONS,
  versionsText,
} from '../../src/plan/plan-versions.js';

describe('plan versions', () => {
  it('knows 1.0 and 2.0 and admits 1.0 by default (docs/api.md, "Plan version 2.0")', () => {
    assert.deepEqual(KNOWN_PLAN_VERSIONS, ['1.0', '2.0']);
    assert.deepEqual(DEFAULT_PLAN_VERSIONS, ['1.0']);
    assert.ok(Object.isFrozen(KNOWN_PLAN_VERSIONS) && Object.isFrozen(DEFAULT_PLAN_VERSIONS));
  });

  it('names one version as itself and several as a list', () => {
    assert.equal(versionsText(['1.0']), '"1.0"');
    assert.equal(versionsText(['2.0', '1.0']), 'one of "2.0", "1.0"');
  });
});
