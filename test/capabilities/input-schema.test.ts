import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkInput, type CompiledSchema } from '../../src/capabilities/input-schema.js';

const schema: CompiledSchema = [
  { key: 'name', type: 'string', required: true, description: '' },
  { key: 'count', type: 'number', required: false, description: '' },
  { key: 'on', type: 'boolean', required: false, description: '' },
  { key: 'options', type: 'object', required: false, description: '' },
  { key: 'list', type: 'array', required: false, description: '' },
];
const codes = (input: unknown) =>
  checkInput(input, schema).map((problem) => `${problem.code} ${problem.field}`);

describe('checkInput()', () => {
  it('accepts valid inputs and ignores keys outside the schema', () => {
    assert.deepEqual(
      codes({ name: 'n', count: 0, on: false, options: {}, list: [], other: Symbol('x') }),
      [],
    );
  });

  it('treats undefined, null and "" as missing for required fields', () => {
    for (const name of [undefined, null, ''])
      assert.deepEqual(codes({ name }), ['REQUIRED_INPUT_MISSING input.name']);
    assert.deepEqual(codes(undefined), ['REQUIRED_INPUT_MISSING input.name']);
    assert.deepEqual(codes(null), ['REQUIRED_INPUT_MISSING input.name']);
  });

  it('requires finite numbers, non-null non-array objects, arrays and booleans', () => {
    assert.deepEqual(codes({ name: 'n', count: NaN, on: 'true', options: [], list: {} }), [
      'INPUT_TYPE_MISMATCH input.count',
      'INPUT_TYPE_MISMATCH input.on',
      'INPUT_TYPE_MISMATCH input.options',
      'INPUT_TYPE_MISMATCH input.list',
    ]);
    assert.equal(
      checkInput({ name: 'n', count: -Infinity }, schema)[0]?.message,
      'input.count must be a finite number, got -Infinity',
    );
    assert.deepEqual(codes({ name: 'n', count: '' }), ['INPUT_TYPE_MISMATCH input.count']);
  });

  it('rejects an input that is not an object when the schema has fields', () => {
    assert.deepEqual(checkInput(['n'], schema), [
      {
        code: 'INPUT_TYPE_MISMATCH',
        field: 'input',
        message: 'input must be an object, got an array',
      },
    ]);
    assert.deepEqual(checkInput('anything', []), [], 'no schema, no checks');
  });

  it('skips deferred values and reports a throwing getter instead of throwing', () => {
    assert.deepEqual(
      checkInput({ name: { later: true } }, schema, () => true),
      [],
    );
    const hostile = Object.defineProperty({}, 'name', {
      get() {
        throw new Error('no');
      },
    });
    assert.deepEqual(codes(hostile), ['INPUT_TYPE_MISMATCH input.name']);
  });
});
