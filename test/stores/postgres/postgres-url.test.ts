// The PostgreSQL store option read without pg (docs/decisions.md, "Light import").
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_STATEMENT_TIMEOUT_MS,
  statementTimeoutOf,
} from '../../../src/stores/postgres/postgres-url.js';

describe('statementTimeoutOf', () => {
  it('is null without the parameter and the number of milliseconds with one whole number', () => {
    assert.equal(statementTimeoutOf('postgres://h/db'), null);
    assert.equal(statementTimeoutOf('postgres://h/db?statement_timeout=0'), 0);
    assert.equal(statementTimeoutOf('postgres://h/db?statement_timeout=250'), 250);
    assert.equal(
      statementTimeoutOf(`postgres://h/db?statement_timeout=${MAX_STATEMENT_TIMEOUT_MS}`),
      2_147_483_647,
    );
  });

  it('is undefined for anything else: not a number, negative, too large, repeated, or no URL', () => {
    for (const url of [
      'postgres://h/db?statement_timeout=5s',
      'postgres://h/db?statement_timeout=-1',
      'postgres://h/db?statement_timeout=1.5',
      'postgres://h/db?statement_timeout=',
      'postgres://h/db?statement_timeout=2147483648',
      'postgres://h/db?statement_timeout=1&statement_timeout=2',
      'postgres://u@[bad/db',
    ]) {
      assert.equal(statementTimeoutOf(url), undefined, url);
    }
  });
});
