// The approver's input of an approval with edits (docs/api.md, "Approve with edits"): captured
// once as plain JSON data within the bounds of a 2.0 plan's inputs, running none of its code,
// then held to the capability's input contract; every refusal APPROVAL_INPUT_INVALID.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { OperatorRuntime, createCapability } from '../../src/index.js';
import { captureEditedInput, checkEditedInput } from '../../src/approvals/edited-input.js';
import {
  capabilityInventory,
  type RegisteredCapability,
} from '../../src/capabilities/inventory.js';
import { digestRecorded } from '../../src/jobs/recorded-value.js';
import { handMade } from '../support/standard-schema-fixtures.js';
import { uniqueName } from '../support/runtime-fixtures.js';

/** Registers one capability with this input schema; its registered record. */
function registered(inputSchema?: Parameters<typeof createCapability>[0]['inputSchema']) {
  const name = uniqueName('edited');
  new OperatorRuntime().use({
    manifest: { name: uniqueName('module'), version: '1', capabilities: [name] },
    capabilities: [
      createCapability({
        name,
        version: '1.0.0',
        description: 'takes an edited input',
        risk: 'write',
        ...(inputSchema !== undefined && { inputSchema }),
        execute: () => null,
      }),
    ],
  });
  return capabilityInventory().get(name) as RegisteredCapability;
}

const invalid = (message: RegExp) => ({ code: 'APPROVAL_INPUT_INVALID', message });

describe('captureEditedInput', () => {
  it('copies plain data once, detached and deep-frozen', () => {
    const given = { to: 'ada', lines: [{ amount: 1 }], note: null };
    const captured = captureEditedInput(given) as typeof given;
    assert.deepEqual(captured, given);
    assert.notEqual(captured, given);
    assert.ok(Object.isFrozen(captured) && Object.isFrozen(captured.lines[0]));
    (given.lines[0] as { amount: number }).amount = 2;
    assert.equal(captured.lines[0]?.amount, 1);
  });

  it('refuses what is not plain data, or too much of it, without running any of its code', () => {
    let ran = 0;
    const getter = Object.defineProperty({}, 'amount', {
      enumerable: true,
      get: () => ++ran,
    });
    const proxy = new Proxy(
      {},
      {
        ownKeys: () => {
          ran += 1;
          return [];
        },
      },
    );
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    let deep: unknown = 1;
    for (let level = 0; level < 200; level++) deep = [deep];
    for (const [value, message] of [
      [{ at: new Date(0) }, /input\.at is a Date \(VALUE_NOT_PLAIN_DATA\)/],
      [getter, /VALUE_NOT_PLAIN_DATA/],
      [{ inner: proxy }, /input\.inner is a proxy/],
      [cycle, /input\.self is a cycle/],
      [{ deep }, /VALUE_TOO_DEEP/],
      [{ text: 'x'.repeat(1_048_577) }, /VALUE_TOO_LONG/],
      [{ n: Number.NaN }, /NaN/],
    ] as const) {
      assert.throws(() => captureEditedInput(value), invalid(message));
    }
    assert.equal(ran, 0, 'no getter or trap ran');
  });
});

describe('checkEditedInput', () => {
  it("refuses an input the field record refuses, naming the field; gives back the record's input", async () => {
    const capability = registered({
      amount: { type: 'number', required: true, description: 'cents' },
    });
    await assert.rejects(
      checkEditedInput(capability, { amount: 'ten' }, false),
      invalid(
        /input contract of .*: Input validation failed: input\.amount must be a finite number/,
      ),
    );
    await assert.rejects(checkEditedInput(capability, {}, false), invalid(/amount/));
    const edit = await checkEditedInput(capability, { amount: 10 }, false);
    assert.deepEqual(edit.input, { amount: 10 });
    assert.deepEqual(edit.recorded, {
      value: { amount: 10 },
      digest: digestRecorded({ amount: 10 }),
    });
  });

  it('in a 2.0 plan, a field the field record does not declare is refused, as admission refuses it', async () => {
    const capability = registered({
      amount: { type: 'number', required: true, description: 'cents' },
    });
    await assert.rejects(
      checkEditedInput(capability, { amount: 1, to: 'eve' }, true),
      invalid(/input\.to is not a field of/),
    );
    // A 1.0 plan's inputs may carry more fields than the record declares.
    assert.deepEqual((await checkEditedInput(capability, { amount: 1, to: 'eve' }, false)).input, {
      amount: 1,
      to: 'eve',
    });
  });

  it("a Standard Schema's output is the approved input; one outside the value domain is refused in a 2.0 plan", async () => {
    const coerced = registered(z.object({ amount: z.coerce.number() }));
    const edit = await checkEditedInput(coerced, { amount: '12' }, true);
    assert.deepEqual(edit.input, { amount: 12 });
    assert.ok(Object.isFrozen(edit.input));
    assert.equal(edit.recorded.digest, digestRecorded({ amount: 12 }));
    await assert.rejects(
      checkEditedInput(coerced, { amount: 'twelve' }, true),
      invalid(/input contract of/),
    );
    const dated = registered(handMade(() => ({ value: { at: new Date(0) } })));
    await assert.rejects(
      checkEditedInput(dated, {}, true),
      invalid(/as its input contract gave it back.*input\.at is a Date/),
    );
    // A 1.0 plan records it as JSON records it.
    const older = await checkEditedInput(dated, {}, false);
    assert.deepEqual(older.recorded.value, { at: '1970-01-01T00:00:00.000Z' });
  });
});
