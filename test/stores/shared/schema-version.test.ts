import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { schemaStep } from '../../../src/stores/shared/schema-version.js';

describe('schemaStep', () => {
  it('creates a store without a version, migrates an older one, keeps the current one', () => {
    assert.equal(schemaStep(undefined, 6, 'SQLite store at "a.db"'), 'create');
    assert.equal(schemaStep(1, 6, 'SQLite store at "a.db"'), 'migrate');
    assert.equal(schemaStep(6, 6, 'SQLite store at "a.db"'), 'current');
  });

  it('refuses a newer version, naming the store and both versions', () => {
    assert.throws(() => schemaStep(7, 5, 'PostgreSQL store at 127.0.0.1:5432/jobs'), {
      code: 'STORE_SCHEMA_TOO_NEW',
      message:
        'The PostgreSQL store at 127.0.0.1:5432/jobs has schema version 7; this Warrant knows up to 5. Upgrade Warrant to open it.',
    });
  });
});
