// Standard Schema v1 inputs (docs/api.md, "Input schemas"): zod and valibot as users write
// them, and hostile schemas (throwing getters and validates, results that never settle).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { handMade, plan, setup } from '../support/standard-schema-fixtures.js';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import * as v from 'valibot';
import { z } from 'zod';
import {
  OperatorRuntime,
  createCapability,
  isPlanAdmissionError,
  type ExecutionPlan,
} from '../../src/index.js';
import { uniqueName } from '../support/runtime-fixtures.js';

async function admissionIssues(runtime: OperatorRuntime, submitted: ExecutionPlan) {
  try {
    await runtime.executePlan(submitted);
  } catch (error) {
    if (isPlanAdmissionError(error)) return error.issues;
    throw error;
  }
  assert.fail('the plan was admitted');
}

describe('Standard Schema inputs: zod and valibot', () => {
  const lookup = z.object({
    id: z.string().describe('User id'),
    limit: z.number().int().default(10),
    tags: z.array(z.string()).optional(),
    name: z.string().transform((text) => text.toUpperCase()),
  });

  it("the schema's output is the one object the authorizer sees and the capability receives", async () => {
    const { runtime, asked, received, add } = setup();
    const name = add(lookup);
    const job = await runtime.executePlan(
      plan({ id: 'a', capability: name, input: { id: 'u1', name: 'ada', extra: true } }),
    );
    assert.equal(job.status, 'completed', job.error);
    assert.deepEqual(received, [{ id: 'u1', limit: 10, name: 'ADA' }]);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.input, received[0], 'the very same object');
    await runtime.close();
  });

  it('refuses a literal input at admission: INPUT_INVALID, field = the issue path', async () => {
    const { runtime, asked, add } = setup();
    const name = add(lookup);
    const issues = await admissionIssues(
      runtime,
      plan({ id: 'a', capability: name, input: { id: 7, name: 'ada' } }),
    );
    assert.deepEqual(
      issues.map(({ code, field, stepIndex, stepId }) => ({ code, field, stepIndex, stepId })),
      [{ code: 'INPUT_INVALID', field: 'input.id', stepIndex: 0, stepId: 'a' }],
    );
    assert.match(issues[0]?.message ?? '', /^steps\[0\] "a": input\.id: .*expected string/);
    assert.equal(asked.length, 0);
    await runtime.close();
  });

  it('checks an input holding a reference at step time: Input validation failed: <path>: <message>', async () => {
    const { runtime, received, add } = setup();
    const echo = add(undefined);
    const name = add(lookup);
    const job = await runtime.executePlan(
      plan(
        { id: 'first', capability: echo, input: { value: 3 } },
        {
          id: 'second',
          capability: name,
          input: { id: { $ref: 'steps.first.result.value' }, name: 'x' },
        },
      ),
    );
    assert.equal(job.status, 'failed');
    assert.match(
      job.steps[1]?.error ?? '',
      /^Input validation failed: input\.id: Invalid input: expected string, received number$/,
    );
    assert.equal(received.length, 1, 'only the first step ran');
    await runtime.close();
  });

  it('accepts valibot the same way', async () => {
    const { runtime, received, add } = setup();
    const name = add(v.object({ path: v.pipe(v.string(), v.minLength(1)) }));
    const issues = await admissionIssues(
      runtime,
      plan({ id: 'a', capability: name, input: { path: '' } }),
    );
    assert.deepEqual(
      issues.map((issue) => [issue.code, issue.field]),
      [['INPUT_INVALID', 'input.path']],
    );
    const job = await runtime.executePlan(
      plan({ id: 'a', capability: name, input: { path: 'a.txt' } }),
    );
    assert.equal(job.status, 'completed');
    assert.deepEqual(received, [{ path: 'a.txt' }]);
    await runtime.close();
  });

  it('describes it with exactly the Part I keys, fields derived from its JSON Schema', () => {
    const { runtime, add } = setup();
    const name = add(lookup);
    const descriptor = runtime.describeCapability(name);
    assert.deepEqual(descriptor?.inputSchema, {
      id: { type: 'string', required: true, description: 'User id' },
      limit: { type: 'number', required: false, description: '' },
      tags: { type: 'array', required: false, description: '' },
      name: { type: 'string', required: true, description: '' },
    });
    assert.deepEqual(Object.keys(descriptor ?? {}), [
      'name',
      'version',
      'description',
      'risk',
      'inputSchema',
    ]);
    const plain = add(handMade((value) => ({ value })));
    assert.deepEqual(runtime.describeCapability(plain)?.inputSchema, {});
  });
});

describe('Standard Schema inputs: hostile schemas', () => {
  it('a throwing ~standard getter is CAPABILITY_DEFINITION_INVALID at createCapability and use()', () => {
    const hostile = {
      get '~standard'(): never {
        throw new Error('getter boom');
      },
    } as unknown as StandardSchemaV1;
    const definition = {
      name: uniqueName('hostile'),
      version: '1',
      description: 'd',
      risk: 'read' as const,
      inputSchema: hostile,
      execute: () => 1,
    };
    assert.throws(() => createCapability(definition), {
      code: 'CAPABILITY_DEFINITION_INVALID',
      message: /inputSchema\['~standard'\] could not be read \(getter boom\)/,
    });
    assert.throws(
      () =>
        new OperatorRuntime().use({
          manifest: { name: uniqueName('module'), version: '1', capabilities: [definition.name] },
          capabilities: [
            {
              ...definition,
              execute: (input: unknown) => input,
            },
          ],
        }),
      { code: 'CAPABILITY_DEFINITION_INVALID', message: /getter boom/ },
    );
  });

  it('a ~standard without a validate function, or of another version, is refused', () => {
    for (const props of [
      { version: 1, vendor: 'x' },
      { version: 2, vendor: 'x', validate: () => ({}) },
    ]) {
      assert.throws(
        () =>
          createCapability({
            name: uniqueName('bad'),
            version: '1',
            description: 'd',
            risk: 'read',
            inputSchema: { '~standard': props } as unknown as StandardSchemaV1,
            execute: () => 1,
          }),
        {
          code: 'CAPABILITY_DEFINITION_INVALID',
          message: /inputSchema\['~standard'\]\.(validate|version)/,
        },
      );
    }
  });

  it('a validate that throws is INPUT_INVALID at admission and a failed step at step time', async () => {
    const { runtime, asked, add } = setup();
    const echo = add(undefined);
    const name = add(
      handMade(() => {
        throw new Error('validate boom');
      }),
    );
    const issues = await admissionIssues(runtime, plan({ id: 'a', capability: name, input: {} }));
    assert.deepEqual(
      issues.map((issue) => [issue.code, issue.field, issue.message]),
      [['INPUT_INVALID', 'input', 'steps[0] "a": input: the schema threw: validate boom']],
    );
    const job = await runtime.executePlan(
      plan(
        { id: 'first', capability: echo, input: 1 },
        { id: 'second', capability: name, input: { $ref: 'steps.first.result' } },
      ),
    );
    assert.equal(
      job.steps[1]?.error,
      'Input validation failed: input: the schema threw: validate boom',
    );
    assert.equal(asked.length, 1, 'the authorizer was asked about the first step only');
    await runtime.close();
  });

  it('malformed results fail closed', async () => {
    const { runtime, add } = setup();
    for (const result of [null, 'yes', { issues: [] }, { issues: 'bad' }]) {
      const name = add(handMade(() => result));
      const issues = await admissionIssues(runtime, plan({ id: 'a', capability: name }));
      assert.equal(
        issues[0]?.message,
        'steps[0] "a": input: the schema returned a malformed result',
      );
    }
    await runtime.close();
  });
});
