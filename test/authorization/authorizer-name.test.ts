import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { authorizerName } from '../../src/authorization/authorizer-name.js';

describe('authorizerName()', () => {
  it('reads an own string data property `name`', () => {
    assert.equal(authorizerName({ name: 'policy-v2', authorize() {} }), 'policy-v2');
    assert.equal(authorizerName({ name: '' }), '');
  });

  it('gives none for an inherited name, a non-string, a getter (never run) or a throwing proxy', () => {
    class Policy {
      name = 7;
    }
    let read = 0;
    const withGetter = {
      get name() {
        read++;
        return 'from a getter';
      },
    };
    const hostile = new Proxy(
      {},
      {
        getOwnPropertyDescriptor() {
          throw new Error('trap');
        },
      },
    );
    assert.equal(authorizerName(Object.create({ name: 'inherited' }) as object), undefined);
    assert.equal(authorizerName(new Policy()), undefined);
    assert.equal(authorizerName(withGetter), undefined);
    assert.equal(read, 0, 'the getter never ran');
    assert.equal(authorizerName(hostile), undefined);
    assert.equal(
      authorizerName(function named() {}),
      'named',
      'a function has an own name',
    );
  });
});
