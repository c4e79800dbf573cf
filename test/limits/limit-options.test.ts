import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';
import { checkLimitsOption } from '../../src/limits/limit-options.js';

const valid = { name: 'l', per: 'caller', max: 5, windowMs: 60_000 };

function refused(limits: unknown, message: string | RegExp): void {
  assert.throws(
    () => new OperatorRuntime({ limits: limits as never }),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, 'RUNTIME_OPTIONS_INVALID');
      if (typeof message === 'string') assert.equal(error.message, message);
      else assert.match(error.message, message);
      return true;
    },
  );
}

describe('limits option', () => {
  it('reads limits once, frozen, with their window text; [] is none', () => {
    const [limit] =
      checkLimitsOption([
        { ...valid, match: { capability: 'fs.read', risk: 'read' }, cost: true },
      ]) ?? [];
    assert.deepEqual(limit, {
      name: 'l',
      capability: 'fs.read',
      risk: 'read',
      per: 'caller',
      max: 5,
      windowMs: 60_000,
      cost: true,
      window: '1m',
    });
    assert.ok(Object.isFrozen(limit));
    assert.equal(checkLimitsOption([]), undefined);
    assert.equal(checkLimitsOption(undefined), undefined);
    assert.deepEqual(checkLimitsOption([{ ...valid, match: {} }])?.[0]?.capability, undefined);
  });

  it('refuses every malformed limit with RUNTIME_OPTIONS_INVALID naming it', () => {
    refused({}, 'options.limits must be an array of limits, got an object');
    refused([1], 'options.limits[0] must be an object { name, match?, per, max, windowMs, cost? }');
    refused([{ ...valid, name: '' }], /^options\.limits\[0\]\.name must be a non-empty string/);
    refused([{ ...valid, name: 'a\nb' }], /^options\.limits\[0\]\.name must be/);
    refused([valid, valid], 'options.limits[1].name "l" is taken');
    refused(
      [{ ...valid, per: 'user' }],
      'options.limits[0].per must be "caller", "actor", "tenant" or "global", got "user"',
    );
    refused(
      [{ ...valid, max: -1 }],
      'options.limits[0].max must be a finite non-negative number, got -1',
    );
    refused([{ ...valid, max: Number.NaN }], /^options\.limits\[0\]\.max must be/);
    refused(
      [{ ...valid, windowMs: 0 }],
      /^options\.limits\[0\]\.windowMs must be an integer from 1/,
    );
    refused([{ ...valid, windowMs: 1.5 }], /^options\.limits\[0\]\.windowMs must be/);
    refused(
      [{ ...valid, cost: false }],
      'options.limits[0].cost must be true when given, got false',
    );
    refused([{ ...valid, window: 1 }], 'options.limits[0] has an unknown field "window"');
    refused([{ ...valid, match: [] }], /^options\.limits\[0\]\.match must be an object/);
    refused(
      [{ ...valid, match: { tool: 'x' } }],
      'options.limits[0].match has an unknown field "tool"',
    );
    refused(
      [{ ...valid, match: { risk: 'high' } }],
      /^options\.limits\[0\]\.match\.risk must be "read"/,
    );
    refused(
      [{ ...valid, match: { capability: 3 } }],
      /^options\.limits\[0\]\.match\.capability must be/,
    );
    refused(
      [
        Object.defineProperty({ ...valid }, 'max', {
          enumerable: true,
          get() {
            throw new Error('boom');
          },
        }),
      ],
      /^options\.limits\[0\]\.max could not be read/,
    );
    refused(
      Array.from({ length: 101 }, (_, index) => ({ ...valid, name: `l${index}` })),
      /at most 100/,
    );
  });
});
