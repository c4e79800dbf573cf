import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createError, isIssuedError, issueError } from '../../src/errors/issued-errors.js';

describe('issued errors', () => {
  it('stamps a read-only code and recognises only the very error issued with that code', () => {
    const error = createError(TypeError, 'SOME_CODE', 'message', new Error('cause'));
    assert.ok(error instanceof TypeError);
    assert.equal(error.code, 'SOME_CODE');
    assert.equal((error.cause as Error).message, 'cause');
    assert.throws(() => {
      (error as { code: string }).code = 'OTHER';
    }, TypeError);
    assert.equal(isIssuedError(error, 'SOME_CODE'), true);
    assert.equal(isIssuedError(error, 'OTHER'), false);
    assert.equal(
      isIssuedError(Object.assign(new Error('x'), { code: 'SOME_CODE' }), 'SOME_CODE'),
      false,
    );
    assert.equal(isIssuedError(new Proxy(error, {}), 'SOME_CODE'), false);
    assert.equal(isIssuedError(Object.create(error), 'SOME_CODE'), false);
    assert.equal(isIssuedError('SOME_CODE', 'SOME_CODE'), false);
  });

  it('keeps the issued set behind a frozen holder on globalThis, shared by every copy of the module', () => {
    const error = issueError(new Error('e'), 'SHARED_CODE');
    const key = Symbol.for('warrant.issuedErrors.v2');
    const holder = (globalThis as unknown as Record<symbol, { has(value: unknown): boolean }>)[key];
    assert.ok(holder !== undefined && holder.has(error));
    assert.ok(Object.isFrozen(holder));
    assert.deepEqual(Object.keys(holder).sort(), ['add', 'has']);
    // Nothing removes an issued error, and the holder cannot be replaced.
    assert.equal((holder as unknown as { delete?: unknown }).delete, undefined);
    assert.throws(() => {
      (globalThis as unknown as Record<symbol, unknown>)[key] = { has: () => false };
    }, TypeError);
    assert.equal(isIssuedError(error, 'SHARED_CODE'), true);
  });
});
