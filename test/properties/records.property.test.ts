// Property: a record holds what JSON.stringify records (issue 15, item 2). For generated hostile
// values (test/properties/hostile-values.ts) used as a step's result, its input and the plan's
// metadata, the SQLite store's record holds exactly what `JSON.stringify` would write for them
// (toJSON results, unboxed primitives, holes as null, strings with lone surrogates kept), and
// the memory store's record, encoded the documented way, is deep-equal to it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { OperatorRuntime, type ExecutionPlan, type Job } from '../../src/index.js';
import { toJsonSafe } from '../../src/json/json-value.js';
import { comparable } from '../stores/contract.js';
import { register } from '../support/runtime-fixtures.js';
import { buildHostile, hostileSpecArb, jsonOracle } from './hostile-values.js';
import { checkProperty, runLabel } from './support.js';

describe('property: records hold what JSON.stringify records', () => {
  const sqlite = new OperatorRuntime({ store: 'sqlite::memory:' });
  const memory = new OperatorRuntime({ store: 'memory' });
  after(async () => {
    await sqlite.close();
    await memory.close();
  });
  let produced: unknown;
  const [producer] = register(sqlite, { execute: () => produced });

  it(`for hostile results, inputs and metadata, in SQLite and in memory (${runLabel})`, async () => {
    await checkProperty(
      fc.asyncProperty(hostileSpecArb, hostileSpecArb, hostileSpecArb, async (...specs) => {
        const [result, input, metadata] = specs.map(buildHostile);
        produced = result;
        const plan: ExecutionPlan = {
          version: '1.0',
          // Hostile on purpose: metadata is recorded whatever it is.
          metadata: metadata as ExecutionPlan['metadata'],
          steps: [{ id: 's', capability: producer as string, input }],
        };
        const durable = await sqlite.executePlan(plan);
        const kept = await memory.executePlan(plan);
        assert.equal(durable.status, 'completed', durable.error);
        const stored = (await sqlite.getJob(durable.id)) as Job;
        assert.deepEqual(stored.steps[0]?.result, jsonOracle('result', result));
        assert.deepEqual(stored.result, jsonOracle('result', result));
        assert.deepEqual(stored.steps[0]?.input, jsonOracle('input', input));
        assert.deepEqual(stored.metadata, jsonOracle('metadata', metadata));
        assert.deepEqual(
          comparable(stored),
          comparable(toJsonSafe(await memory.getJob(kept.id)) as Job),
        );
      }),
    );
  });
});
