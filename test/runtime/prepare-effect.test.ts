// Prepared effects (docs/api.md, "Prepared effects"): `prepare` runs after the input check and
// before the authorizer, which decides on the frozen effect; the decision, `capability.started`
// and the record carry it; `execute` gets a fresh copy; a bad `prepare` fails the step with
// EFFECT_PREPARE_FAILED and nothing is invoked; an approval covers one effect only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  type ApproverPolicy,
  type CapabilityAuthorizationContext,
  type ExecutionContext,
  type Job,
  type PrepareContext,
  type StepApprovalRequest,
} from '../../src/index.js';
import { digestJson } from '../../src/json/canonical-json.js';
import { checkEffect, MAX_EFFECT_BYTES } from '../../src/runtime/prepare-effect.js';
import {
  planOf,
  rawCapability,
  rawModule,
  recordingAuthorizer,
  register,
  uniqueName,
  withRuntime,
} from '../support/runtime-fixtures.js';

const anyone: ApproverPolicy = { canApprove: () => true };

describe('prepared effects', () => {
  it('gives the authorizer the frozen effect and its digest, records both, and gives execute a fresh copy', async () => {
    const authorizer = recordingAuthorizer();
    await withRuntime({ authorizer }, async (runtime) => {
      const seen: { input: unknown; context: PrepareContext }[] = [];
      const executed: unknown[] = [];
      const [name] = register(runtime, {
        inputSchema: { to: { type: 'string', required: true, description: 'who' } },
        prepare(input: unknown, context: PrepareContext) {
          seen.push({ input, context });
          return { op: 'send', to: (input as { to: string }).to, amounts: [1, 2.5, null] };
        },
        execute: ({ context }: { context: ExecutionContext }) => {
          executed.push(context.effect);
          // The capability's own copy: changing it changes neither the record nor the decision.
          (context.effect as { to: string }).to = 'mallory';
          return 'sent';
        },
      });
      const job = await runtime.executePlan(
        planOf({ id: 's', capability: name as string, input: { to: 'bob' } }),
        { caller: { id: 'alice' } },
      );
      assert.equal(job.status, 'completed', job.error);
      const effect = { op: 'send', to: 'bob', amounts: [1, 2.5, null] };
      const digest = digestJson(effect);
      assert.match(digest, /^sha256:[0-9a-f]{64}$/);

      assert.equal(seen.length, 1);
      assert.deepEqual(seen[0]?.input, { to: 'bob' });
      assert.equal(seen[0]?.context.jobId, job.id);
      assert.equal(seen[0]?.context.stepId, 's');
      assert.deepEqual(seen[0]?.context.caller, { id: 'alice' });
      assert.ok(seen[0]?.context.signal instanceof AbortSignal);

      const asked = authorizer.calls[0] as CapabilityAuthorizationContext;
      assert.deepEqual(asked.effect, effect);
      assert.equal(asked.effectDigest, digest);
      assert.ok(Object.isFrozen(asked.effect));
      assert.ok(Object.isFrozen((asked.effect as { amounts: unknown[] }).amounts));
      assert.throws(() => {
        (asked.effect as { to: string }).to = 'mallory';
      }, TypeError);

      assert.deepEqual(executed, [{ op: 'send', to: 'mallory', amounts: [1, 2.5, null] }]);
      assert.notEqual(executed[0], asked.effect);

      const stored = (await runtime.getJob(job.id)) as Job;
      const step = stored.steps[0];
      assert.deepEqual(step?.effect, effect);
      assert.equal(step?.decision?.effectDigest, digest);
      const started = stored.events.find((event) => event.type === 'capability.started');
      assert.equal(started?.data?.effectDigest, digest);
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
    });
  });

  it('records nothing more for a capability without prepare', async () => {
    const authorizer = recordingAuthorizer();
    await withRuntime({ authorizer }, async (runtime) => {
      const [name] = register(runtime, { execute: ({ context }) => 'effect' in context });
      const job = await runtime.executePlan(planOf({ id: 's', capability: name as string }));
      assert.equal(job.result, false);
      assert.equal('effect' in (authorizer.calls[0] as object), false);
      assert.equal('effectDigest' in (authorizer.calls[0] as object), false);
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.equal('effect' in (stored.steps[0] as object), false);
      assert.equal('effectDigest' in (stored.steps[0]?.decision as object), false);
      const started = stored.events.find((event) => event.type === 'capability.started');
      assert.equal('effectDigest' in (started?.data as object), false);
    });
  });

  it('fails the step with EFFECT_PREPARE_FAILED on a throw, a rejection, a time-out, a bad value or a large one: nothing asked, nothing invoked', async () => {
    const authorizer = recordingAuthorizer();
    await withRuntime({ authorizer }, async (runtime) => {
      let invoked = 0;
      let timedOutSignal: AbortSignal | undefined;
      const execute = () => {
        invoked += 1;
        return 'ran';
      };
      const cases: [string, Parameters<typeof register>[1], RegExp][] = [
        [
          'throw',
          {
            prepare: () => {
              throw new Error('no route');
            },
            execute,
          },
          /^EFFECT_PREPARE_FAILED: no route$/,
        ],
        [
          'reject',
          { prepare: () => Promise.reject(new Error('lookup failed')), execute },
          /^EFFECT_PREPARE_FAILED: lookup failed$/,
        ],
        [
          'timeout',
          {
            timeoutMs: 50,
            prepare: (_input: unknown, context: PrepareContext) => {
              timedOutSignal = context.signal;
              return new Promise(() => {});
            },
            execute,
          },
          /^EFFECT_PREPARE_FAILED: prepare timed out after 50ms$/,
        ],
        [
          'date',
          { prepare: () => ({ at: new Date(0) }), execute },
          /^EFFECT_PREPARE_FAILED: effect\.at is a Date/,
        ],
        [
          'function',
          { prepare: () => ({ run: () => 1 }), execute },
          /^EFFECT_PREPARE_FAILED: effect\.run is a function/,
        ],
        [
          'undefined',
          { prepare: () => undefined, execute },
          /^EFFECT_PREPARE_FAILED: the effect is undefined/,
        ],
        [
          'large',
          { prepare: () => ({ text: 'x'.repeat(MAX_EFFECT_BYTES) }), execute },
          /^EFFECT_PREPARE_FAILED: the effect is 65547 bytes of canonical JSON, over 65536$/,
        ],
        [
          'large, two bytes a character',
          { prepare: () => ({ text: 'é'.repeat(MAX_EFFECT_BYTES / 2) }), execute },
          /^EFFECT_PREPARE_FAILED: the effect is 65547 bytes of canonical JSON, over 65536$/,
        ],
        [
          'a thenable that rejects',
          {
            prepare: () => ({
              then: (_resolve: unknown, reject: (error: Error) => void) =>
                reject(new Error('custom thenable')),
            }),
            execute,
          },
          /^EFFECT_PREPARE_FAILED: custom thenable$/,
        ],
        [
          'a then that throws when read',
          {
            prepare: () => ({
              get then(): unknown {
                throw new Error('hostile then');
              },
            }),
            execute,
          },
          /^EFFECT_PREPARE_FAILED: hostile then$/,
        ],
      ];
      for (const [label, definition, error] of cases) {
        const [name] = register(runtime, definition);
        const job = await runtime.executePlan(planOf({ id: 's', capability: name as string }));
        assert.equal(job.status, 'failed', label);
        assert.match(job.error ?? '', error, label);
        assert.equal(job.steps[0]?.decision, undefined, label);
        assert.equal(job.steps[0]?.effect, undefined, label);
        assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
      }
      assert.equal(invoked, 0);
      assert.equal(authorizer.calls.length, 0);
      assert.equal(timedOutSignal?.aborted, true);
    });
  });

  it('digests, when first read, the effect as prepared: the object prepare returned, changed later, changes nothing', async () => {
    // The authorizer never reads the digest; the capability changes the very object prepare
    // returned (which prepare kept): the digest is still of the effect as authorized.
    await withRuntime({}, async (runtime) => {
      let held: { op: string; to: string } | undefined;
      const [name] = register(runtime, {
        prepare: () => (held = { op: 'send', to: 'bob' }),
        execute: () => {
          (held as { to: string }).to = 'mallory';
          return 'sent';
        },
      });
      const job = await runtime.executePlan(planOf({ id: 's', capability: name as string }));
      assert.equal(job.status, 'completed', job.error);
      assert.equal(held?.to, 'mallory');
      const digest = digestJson({ op: 'send', to: 'bob' });
      assert.deepEqual(job.steps[0]?.effect, { op: 'send', to: 'bob' });
      assert.equal(job.steps[0]?.decision?.effectDigest, digest);
      const started = job.events.find((event) => event.type === 'capability.started');
      assert.equal(started?.data?.effectDigest, digest);
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
    });
  });

  it('takes the effect from a promise, a thenable or a plain return alike', async () => {
    await withRuntime({}, async (runtime) => {
      const returns: [string, () => unknown][] = [
        ['value', () => ({ op: 'x' })],
        ['promise', () => Promise.resolve({ op: 'x' })],
        ['thenable', () => ({ then: (resolve: (value: unknown) => void) => resolve({ op: 'x' }) })],
      ];
      for (const [label, prepare] of returns) {
        const [name] = register(runtime, { prepare, execute: () => 'ran' });
        const job = await runtime.executePlan(planOf({ id: 's', capability: name as string }));
        assert.equal(job.status, 'completed', `${label}: ${job.error}`);
        assert.deepEqual(job.steps[0]?.effect, { op: 'x' }, label);
        assert.equal(job.steps[0]?.decision?.effectDigest, digestJson({ op: 'x' }), label);
      }
    });
  });

  it('accepts an effect of exactly 64 KiB of canonical JSON', () => {
    const text = 'x'.repeat(MAX_EFFECT_BYTES - 11);
    const checked = checkEffect({ text });
    assert.ok(checked.ok);
    assert.equal(checked.effect.digest, digestJson({ text }));
    assert.equal(checkEffect({ text: `${text}x` }).ok, false);
  });

  it('calls a plain capability object`s prepare with the object as this, and refuses one that is not a function', async () => {
    await withRuntime({}, async (runtime) => {
      const name = uniqueName('plain');
      const capability = Object.assign(
        rawCapability(name, {
          prepare(this: { base: string }, input: { path: string }) {
            return { url: `${this.base}${input.path}` };
          },
          execute: (_input: unknown, context: ExecutionContext) => context.effect,
        }),
        { base: 'https://example.test' },
      );
      runtime.use(rawModule([capability]));
      const job = await runtime.executePlan(
        planOf({ id: 's', capability: name, input: { path: '/a' } }),
      );
      assert.deepEqual(job.result, { url: 'https://example.test/a' });
      assert.throws(
        () => runtime.use(rawModule([rawCapability(uniqueName('bad'), { prepare: 'soon' })])),
        (error: Error & { code?: string }) =>
          error.code === 'CAPABILITY_DEFINITION_INVALID' &&
          /prepare must be a function, got "soon"/.test(error.message),
      );
    });
  });

  it('binds an approval to the effect: the request carries it, and a step whose effect changed is not run', async () => {
    const runtime = new OperatorRuntime({ approvals: { approver: anyone } });
    try {
      let target = 'bob';
      let invoked = 0;
      const [name] = register(runtime, {
        risk: 'write',
        prepare: () => ({ op: 'pay', to: target }),
        execute: () => {
          invoked += 1;
          return 'paid';
        },
      });
      const submit = () =>
        runtime.executePlan(planOf({ id: 'pay', capability: name as string }), {
          caller: { id: 'alice' },
        });
      const approve = (job: Job) =>
        runtime.decideApproval({
          jobId: job.id,
          stepId: 'pay',
          inputDigest: job.steps[0]?.decision?.inputDigest as string,
          approver: { id: 'carol' },
          decision: 'approve',
        });

      const first = await submit();
      assert.equal(first.status, 'awaiting_approval');
      const [request] = (await runtime.listApprovals({ jobId: first.id })) as StepApprovalRequest[];
      assert.deepEqual(request?.effect, { op: 'pay', to: 'bob' });
      assert.equal(request?.effectDigest, digestJson({ op: 'pay', to: 'bob' }));
      const requested = first.events.find((event) => event.type === 'approval.requested');
      assert.equal(requested?.data?.effectDigest, request?.effectDigest);
      // The same effect prepared again: the approval covers it.
      const ran = await approve(first);
      assert.equal(ran.status, 'completed', ran.error);
      assert.equal(invoked, 1);

      const second = await submit();
      assert.equal(second.status, 'awaiting_approval');
      // The world changed between the request and the decision: the approval does not cover it.
      target = 'mallory';
      const refused = await approve(second);
      assert.equal(refused.status, 'failed');
      assert.equal(refused.error, 'Effect changed since approval was requested');
      assert.equal(invoked, 1);
      const stored = (await runtime.getJob(second.id)) as Job;
      assert.deepEqual(stored.steps[0]?.effect, { op: 'pay', to: 'bob' });
      assert.deepEqual(await runtime.verifyJob(second.id), {
        ok: true,
        events: stored.events.length,
      });
    } finally {
      await runtime.close();
    }
  });
  it("an approver's edit is a new effect: prepared from the approved input and authorized again with it", async () => {
    const seen: CapabilityAuthorizationContext[] = [];
    const runtime = new OperatorRuntime({
      approvals: { approver: anyone },
      authorizer: {
        authorize(context) {
          seen.push(context);
          return context.approval === undefined
            ? { decision: 'require_approval' }
            : { decision: 'allow' };
        },
      },
    });
    try {
      const effects: unknown[] = [];
      const [name] = register(runtime, {
        risk: 'write',
        inputSchema: { to: { type: 'string', required: true, description: 'payee' } },
        prepare: (input) => ({ op: 'pay', to: (input as { to: string }).to }),
        execute: ({ context }: { context: ExecutionContext }) => {
          effects.push(context.effect);
          return 'paid';
        },
      });
      const job = await runtime.executePlan(
        planOf({ id: 'pay', capability: name as string, input: { to: 'bob' } }),
        { caller: { id: 'alice' } },
      );
      assert.equal(job.status, 'awaiting_approval');
      const done = await runtime.decideApproval({
        jobId: job.id,
        stepId: 'pay',
        inputDigest: job.steps[0]?.decision?.inputDigest as string,
        approver: { id: 'carol' },
        decision: 'approve',
        input: { to: 'dave' },
      });
      assert.equal(done.status, 'completed', done.error);
      assert.deepEqual(effects, [{ op: 'pay', to: 'dave' }]);
      const last = seen.at(-1);
      assert.deepEqual(last?.effect, { op: 'pay', to: 'dave' });
      assert.equal(last?.approval?.edited, true);
      assert.equal(done.steps[0]?.decision?.effectDigest, digestJson({ op: 'pay', to: 'dave' }));
      assert.equal((await runtime.verifyJob(done.id))?.ok, true);
    } finally {
      await runtime.close();
    }
  });
});
