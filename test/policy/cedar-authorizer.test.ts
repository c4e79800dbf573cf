// docs/api.md, "Policy as code: Cedar": cedarAuthorizer's outcomes, its request shape, the
// determining policies in the record, and the decision cache.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  cedarAuthorizer,
  validateCedarPolicies,
  type CapabilityAuthorizationContext,
  type ExecutionCaller,
} from '../../src/index.js';
import { decisionPolicies } from '../../src/authorization/decision-policies.js';
import { isIssuedError } from '../../src/errors/warrant-error.js';
import type { PlanVersion } from '../../src/plan/execution-plan.js';
import { MAX_INPUT_DEPTH } from '../../src/policy/cedar-request.js';
import { register, runtimeWith } from '../support/runtime-fixtures.js';

const CAPABILITY = { name: 'mail.send', version: '1.2.0', risk: 'write' } as const;

function ask(
  policies: string,
  context: Partial<CapabilityAuthorizationContext> = {},
): { decision: string; reason?: string; policies: readonly string[] | undefined } {
  const answer = cedarAuthorizer({ policies }).authorize({
    jobId: 'job-1',
    stepId: 'send',
    capability: CAPABILITY,
    input: { to: 'a@b.c', count: 2 },
    caller: { id: 'alice', scopes: ['mail'] },
    inputDigest: 'sha256:00',
    ...context,
  }) as { decision: string; reason?: string };
  return { ...answer, policies: decisionPolicies(answer) };
}

/** Allowed when `condition` holds for the default request, and only then. */
function holds(condition: string, context: Partial<CapabilityAuthorizationContext> = {}): boolean {
  const { decision } = ask(`permit(principal, action, resource) when { ${condition} };`, context);
  return decision === 'allow';
}

const refusal = (pattern: RegExp) => (error: unknown) =>
  isIssuedError(error, 'CEDAR_POLICY_INVALID') && pattern.test((error as Error).message);

describe('cedarAuthorizer outcomes', () => {
  it('allows on a permit and no forbid, naming the determining permits in text order', () => {
    const answer = ask(`
      @id("mail") permit(principal, action == Warrant::Action::"mail.send", resource);
      permit(principal, action, resource) when { principal.scopes.contains("mail") };
      permit(principal, action, resource) when { false };`);
    assert.deepEqual(answer, { decision: 'allow', policies: ['mail', 'policy1'] });
  });

  it('denies on a forbid, naming every forbidding policy', () => {
    const answer = ask(`
      permit(principal, action, resource);
      @id("no-mail") forbid(principal, action, resource) when { context.input.to like "*@b.c" };
      forbid(principal, action in Warrant::Action::"risk:write", resource);`);
    assert.deepEqual(answer, {
      decision: 'deny',
      reason: 'Forbidden by policy no-mail, policy2',
      policies: ['no-mail', 'policy2'],
    });
  });

  it('denies when no policy permits, with no determining policy', () => {
    assert.deepEqual(ask('permit(principal, action, resource) when { context.input.count > 5 };'), {
      decision: 'deny',
      reason: 'No policy permits',
      policies: [],
    });
    assert.deepEqual(ask(''), { decision: 'deny', reason: 'No policy permits', policies: [] });
  });

  it('counts a forbid whose condition errors as applying (fail closed)', () => {
    const answer = ask(`
      permit(principal, action, resource);
      @id("odd") forbid(principal, action, resource) when { context.input.missing == 1 };`);
    assert.deepEqual(answer, {
      decision: 'deny',
      reason: 'Forbidden by policy odd',
      policies: ['odd'],
    });
  });

  it('does not apply a permit whose condition errors', () => {
    const answer = ask('permit(principal, action, resource) when { context.input.missing == 1 };');
    assert.deepEqual(answer, { decision: 'deny', reason: 'No policy permits', policies: [] });
    // ...while a permit beside it still allows.
    const beside = ask(`
      permit(principal, action, resource) when { context.input.missing == 1 };
      permit(principal, action, resource);`);
    assert.deepEqual(beside, { decision: 'allow', policies: ['policy1'] });
  });

  it('requires approval when a determining permit says so, and allows once approved', () => {
    const policies = `
      @id("writes") @warrant("require_approval") permit(principal, action in Warrant::Action::"risk:write", resource);
      @id("mail") permit(principal, action, resource) when { principal.scopes.contains("mail") };`;
    assert.deepEqual(ask(policies), {
      decision: 'require_approval',
      reason: 'Approval required by policy writes',
      policies: ['writes', 'mail'],
    });
    const approval = { approver: { id: 'bob' }, grantedAt: 'now', inputDigest: 'sha256:00' };
    assert.deepEqual(ask(policies, { approval }), {
      decision: 'allow',
      policies: ['writes', 'mail'],
    });
    // A permit asking for approval that does not apply asks nothing.
    assert.deepEqual(ask(policies, { capability: { ...CAPABILITY, risk: 'read' } }), {
      decision: 'allow',
      policies: ['mail'],
    });
  });

  it('always denies a capability whose name starts with "risk:"', () => {
    const answer = ask('permit(principal, action, resource);', {
      capability: { name: 'risk:write', version: '1', risk: 'read' },
    });
    assert.equal(answer.decision, 'deny');
    assert.match(answer.reason ?? '', /starting with "risk:"/);
  });
});

describe('the request each step makes', () => {
  it('names the caller as principal, with scopes, and roles and tenant only when it has them', () => {
    assert.ok(holds('principal == Warrant::Caller::"alice"'));
    assert.ok(holds('principal.scopes == ["mail"]'));
    assert.ok(holds('principal.scopes.isEmpty()', { caller: { id: 'alice' } }));
    assert.ok(holds('!(principal has roles) && !(principal has tenant)'));
    const admin: ExecutionCaller = { id: 'root', roles: ['admin'], tenant: 'acme' };
    assert.ok(holds('principal.roles.contains("admin")', { caller: admin }));
    assert.ok(holds('principal.tenant == "acme"', { caller: admin }));
  });

  it('is Warrant::Anonymous::"anonymous" without a caller or a string id, with no attributes', () => {
    const anonymous = 'principal == Warrant::Anonymous::"anonymous" && !(principal has scopes)';
    assert.ok(holds(anonymous, { caller: undefined }));
    assert.ok(holds(anonymous, { caller: { scopes: ['mail'] } }));
    assert.ok(!holds('principal is Warrant::Caller', { caller: undefined }));
  });

  it('names the capability as action, in its risk group, and as resource with its attributes', () => {
    assert.ok(holds('action == Warrant::Action::"mail.send"'));
    assert.ok(holds('action in Warrant::Action::"risk:write"'));
    assert.ok(!holds('action in Warrant::Action::"risk:read"'));
    assert.ok(holds('resource == Warrant::Capability::"mail.send@1.2.0"'));
    assert.ok(
      holds(
        'resource.name == "mail.send" && resource.version == "1.2.0" && resource.risk == "write"',
      ),
    );
  });

  it('gives the context input, inputDigest, jobId, stepId and approved', () => {
    assert.ok(holds('context.input == { "to": "a@b.c", "count": 2 }'));
    assert.ok(holds('context.inputDigest == "sha256:00"'));
    assert.ok(holds('context.jobId == "job-1" && context.stepId == "send"'));
    assert.ok(holds('context.approved == false'));
    const approval = { approver: { id: 'bob' }, grantedAt: 'now', inputDigest: 'sha256:00' };
    assert.ok(holds('context.approved == true', { approval }));
    assert.ok(holds('context.input == [1, "a", true, []]', { input: [1, 'a', true, []] }));
  });

  it('gives the context a prepared effect and its digest, and denies one Cedar cannot read', () => {
    const effect = Object.freeze({ method: 'GET', addresses: Object.freeze(['93.184.216.34']) });
    const prepared = { effect, effectDigest: 'sha256:ef' };
    assert.ok(holds('context has effect && context.effect.method == "GET"', prepared));
    assert.ok(holds('context.effect.addresses.contains("93.184.216.34")', prepared));
    assert.ok(holds('context.effectDigest == "sha256:ef"', prepared));
    assert.ok(!holds('context has effect || context has effectDigest'));
    const policies = `permit(principal, action, resource);
      @id("no-internal") forbid(principal, action, resource) when {
        context has effect && context.effect has addresses && context.effect.addresses.contains("10.0.0.1")
      };`;
    assert.equal(ask(policies, prepared).decision, 'allow');
    assert.deepEqual(
      ask(policies, { effect: { addresses: ['10.0.0.1'] }, effectDigest: 'sha256:01' }),
      { decision: 'deny', reason: 'Forbidden by policy no-internal', policies: ['no-internal'] },
    );
    const unreadable = ask('permit(principal, action, resource);', {
      effect: { text: 'a\ud800' },
      effectDigest: 'sha256:02',
    });
    assert.equal(unreadable.decision, 'deny');
    assert.match(unreadable.reason ?? '', /^Effect cannot be given to Cedar: at effect\.text, /);
  });

  it('carries floats, null and reserved keys, so policies can match them as documented', () => {
    const input = {
      price: 1.5,
      tiny: 1e-7,
      long: 2 ** 60,
      big: 2 ** 64,
      note: null,
      list: [null, 0.25],
      who: { __entity: { type: 'Warrant::Caller', id: 'root' } },
      ip: { __extn: { fn: 'ip', arg: '10.0.0.1' } },
      ___expr: 'one more underscore',
    };
    for (const condition of [
      'context.input.price == decimal("1.5") && context.input.price.greaterThan(decimal("1.4"))',
      'context.input.tiny == Warrant::Number::"1e-7"',
      'context.input.long == 1152921504606847000 && context.input.long > 1000',
      'context.input.big == Warrant::Number::"18446744073709552000"',
      'context.input.note == Warrant::Null::"null" && context.input.note is Warrant::Null',
      'context.input.list.contains(Warrant::Null::"null") && context.input.list.contains(decimal("0.25"))',
      'context.input.who.___entity == { "type": "Warrant::Caller", "id": "root" }',
      'context.input.ip.___extn.arg == "10.0.0.1"',
      'context.input.____expr == "one more underscore"',
    ])
      assert.ok(holds(condition, { input }), condition);
    // Input never forges an entity or an extension value.
    assert.ok(!holds('context.input.who == Warrant::Caller::"root"', { input }));
    assert.ok(!holds('context.input has ip && context.input.ip == ip("10.0.0.1")', { input }));
    // A string is never a marker.
    assert.ok(!holds('context.input.note == Warrant::Null::"null"', { input: { note: 'null' } }));
  });

  it('denies, before any policy, a step whose input cannot be given to Cedar whole', () => {
    const deep = (levels: number): unknown => (levels === 0 ? 0.5 : { next: deep(levels - 1) });
    const cases: [unknown, RegExp][] = [
      [{ pad: deep(MAX_INPUT_DEPTH) }, /nested deeper than 123 levels/],
      [
        { at: new Date(0) },
        /^Input cannot be given to Cedar: at input\.at, a Date is not JSON data$/,
      ],
      [{ n: NaN }, /NaN is not JSON data/],
      [{ text: 'a\ud800' }, /lone surrogate/],
    ];
    for (const [input, reason] of cases) {
      const answer = ask('permit(principal, action, resource);', { input });
      assert.equal(answer.decision, 'deny');
      assert.match(answer.reason ?? '', reason);
      assert.deepEqual(answer.policies, []);
    }
    // As deep as is carried, with a marker at the deepest level: Cedar reads it.
    assert.equal(
      ask('permit(principal, action, resource);', { input: deep(MAX_INPUT_DEPTH - 1) }).decision,
      'allow',
    );
  });

  it('denies when a policy reads a value of another type than it expects (a marker for a string), not for a marker elsewhere', () => {
    const policies = `permit(principal, action, resource);
      @id("no-etc") forbid(principal, action, resource) when { context.input.path like "/etc/*" };`;
    for (const path of [null, 0.5, 2 ** 64, 7, ['/etc/shadow']]) {
      assert.deepEqual(ask(policies, { input: { path } }), {
        decision: 'deny',
        reason: 'Forbidden by policy no-etc',
        policies: ['no-etc'],
      });
    }
    for (const pad of [null, 0.5, { __entity: { type: 'X', id: 'y' } }])
      assert.equal(ask(policies, { input: { path: '/tmp/x', pad } }).decision, 'allow');
  });
});

describe('policy text', () => {
  it('refuses text that does not parse, naming its line', () => {
    assert.throws(
      () =>
        cedarAuthorizer({
          policies: 'permit(principal, action, resource);\n\nforbid(principal, action resource);',
        }),
      refusal(/^Cedar policy text does not parse at line 3: /),
    );
  });

  it('names policies by @id, else policy<N> by position, past ten policies too', () => {
    const policies = Array.from(
      { length: 12 },
      (_, index) => `permit(principal, action, resource) when { context.input.count == ${index} };`,
    ).join('\n');
    for (const count of [2, 10, 11]) {
      assert.deepEqual(ask(policies, { input: { count } }).policies, [`policy${count}`]);
    }
  });

  it("refuses duplicate ids, an @id equal to another policy's position included", () => {
    assert.throws(
      () =>
        cedarAuthorizer({
          policies:
            '@id("a") permit(principal, action, resource);\n@id("a") forbid(principal, action, resource);',
        }),
      refusal(/^Duplicate policy id "a": policies 0 and 1$/),
    );
    assert.throws(
      () =>
        cedarAuthorizer({
          policies:
            '@id("policy1") permit(principal, action, resource);\npermit(principal, action, resource);',
        }),
      refusal(/^Duplicate policy id "policy1"/),
    );
  });

  it('refuses templates, unknown @warrant values and malformed options', () => {
    assert.throws(
      () => cedarAuthorizer({ policies: 'permit(principal == ?principal, action, resource);' }),
      refusal(/template/),
    );
    assert.throws(
      () =>
        cedarAuthorizer({ policies: '@warrant("approve") permit(principal, action, resource);' }),
      refusal(/@warrant\("approve"\)/),
    );
    for (const options of [undefined, {}, { policies: 1 }, { policies: '', name: 2 }])
      assert.throws(() => cedarAuthorizer(options as never), refusal(/^cedarAuthorizer /));
  });
});

describe('the decision cache', () => {
  it('answers a repeated request with the same decision, and a different one afresh', () => {
    const authorizer = cedarAuthorizer({
      policies: 'permit(principal, action, resource) when { context.input.count == 2 };',
    });
    const context: CapabilityAuthorizationContext = {
      jobId: 'j',
      stepId: 's',
      capability: CAPABILITY,
      input: { count: 2 },
      inputDigest: 'sha256:00',
    };
    const first = authorizer.authorize(context);
    assert.equal(authorizer.authorize({ ...context, input: { count: 2 } }), first);
    const other = authorizer.authorize({ ...context, input: { count: 3 } });
    assert.notEqual(other, first);
    assert.deepEqual(other, { decision: 'deny', reason: 'No policy permits' });
  });
});

describe('cedarAuthorizer in the runtime', () => {
  it('records the determining policies and the authorizer name; inputDigest is the recorded one', async () => {
    const runtime = runtimeWith({
      authorizer: cedarAuthorizer({
        name: 'mail-policy',
        policies:
          '@id("mine") permit(principal, action, resource) when { context has inputDigest && context.input.n == 1 };',
      }),
    });
    const [name] = register(runtime, { execute: () => 'done' });
    const job = await runtime.executePlan(
      { version: '1.0', steps: [{ id: 'a', capability: name as string, input: { n: 1 } }] },
      { caller: { id: 'alice' } },
    );
    assert.equal(job.status, 'completed');
    const decision = job.steps[0]?.decision;
    assert.equal(decision?.authorizer, 'mail-policy');
    assert.deepEqual(decision?.policies, ['mine']);
    const stored = await runtime.getJob(job.id);
    assert.deepEqual(stored?.steps[0]?.decision?.policies, ['mine']);
    // The context's inputDigest is the decision's: a policy pinned to it allows the same input.
    const pinned = runtimeWith({
      authorizer: cedarAuthorizer({
        policies: `permit(principal, action, resource) when { context.inputDigest == "${decision?.inputDigest}" };`,
      }),
    });
    const [again] = register(pinned, { execute: () => 'done' });
    const second = await pinned.executePlan({
      version: '1.0',
      steps: [{ id: 'a', capability: again as string, input: { n: 1 } }],
    });
    assert.equal(second.status, 'completed');
    await Promise.all([runtime.close(), pinned.close()]);
  });

  it('denies /etc/shadow however its input is padded, never invoking the capability; the forbid validates without `has`', async () => {
    const runtime = runtimeWith({ planVersions: ['1.0', '2.0'] });
    let reads = 0;
    const [read] = register(runtime, {
      inputSchema: { path: { type: 'string', required: true, description: 'the file' } },
      execute: () => {
        reads += 1;
        return 'contents';
      },
    }) as [string];
    await runtime.close();
    // The forbid as the schema now lets it be written, and as authors had to write it before.
    const forbids = ['', 'context has input && '].map(
      (guard) => `@id("all") permit(principal, action, resource);
@id("no-etc") forbid(principal, action == Warrant::Action::"${read}", resource) when { ${guard}context.input.path like "/etc/*" };`,
    );
    const deep = (levels: number): unknown => (levels === 0 ? 1 : { pad: deep(levels - 1) });
    const pads: [string, unknown][] = [
      ['none', undefined],
      ['null', null],
      ['a float', 0.5],
      ['40 levels', deep(40)],
      ['__entity', { __entity: { type: 'X', id: 'y' } }],
      ['__extn', { __extn: { fn: 'decimal', arg: '1.0' } }],
      ['__expr', { __expr: 'true' }],
    ];
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const [index, policies] of forbids.entries()) {
      const guarded = runtimeWith({
        planVersions: ['1.0', '2.0'],
        authorizer: cedarAuthorizer({ policies }),
      });
      const run = (version: PlanVersion, path: string, pad: unknown) =>
        guarded.executePlan({
          version,
          steps: [
            { id: 'a', capability: read, input: pad === undefined ? { path } : { path, pad } },
          ],
        });
      for (const version of ['1.0', '2.0'] as const)
        for (const [label, pad] of pads) {
          const step = `forbid ${index} ${version} ${label}`;
          // A strict 2.0 plan refuses the undeclared pad at admission (docs/api.md, "Plan
          // version 2.0"): nothing is decided or run.
          if (version === '2.0' && pad !== undefined) {
            await assert.rejects(
              run(version, '/etc/shadow', pad),
              (error: { issues?: { code: string }[] }) =>
                error.issues?.map((issue) => issue.code).join() === 'UNDECLARED_INPUT_FIELD',
            );
            continue;
          }
          const job = await run(version, '/etc/shadow', pad);
          const decision = job.steps[0]?.decision;
          outcomes.push(`${step}: ${job.status} ${decision?.outcome} ${decision?.reason}`);
          expected.push(`${step}: failed deny Forbidden by policy no-etc`);
        }
      // The same padding on another path runs: the input reached the policy whole.
      for (const [label, pad] of pads) {
        const job = await run('1.0', '/tmp/notes', pad);
        outcomes.push(`forbid ${index} /tmp/notes ${label}: ${job.status}`);
        expected.push(`forbid ${index} /tmp/notes ${label}: completed`);
      }
      await guarded.close();
    }
    assert.deepEqual(outcomes, expected);
    assert.equal(reads, forbids.length * pads.length, 'only the /tmp/notes steps ran');
    // Both forbids fit the generated schema; the first needs no `has`.
    for (const policies of forbids) assert.deepEqual(validateCedarPolicies(policies), []);
  });

  it('keeps decision.policies in a SQLite record, which still verifies', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'warrant-cedar-')), 'jobs.db');
    const runtime = runtimeWith({
      store: `sqlite:${file}`,
      authorizer: cedarAuthorizer({ policies: '@id("all") permit(principal, action, resource);' }),
    });
    const [name] = register(runtime, { execute: () => 'done' });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'a', capability: name as string, input: { n: 1 } }],
    });
    await runtime.close();
    const reopened = runtimeWith({ store: `sqlite:${file}` });
    const stored = await reopened.getJob(job.id);
    assert.deepEqual(stored?.steps[0]?.decision?.policies, ['all']);
    assert.equal((await reopened.verifyJob(job.id))?.ok, true);
    await reopened.close();
  });

  it('records a denial with its forbidding policy; other authorizers record no policies', async () => {
    const runtime = runtimeWith({
      authorizer: cedarAuthorizer({
        policies:
          'permit(principal, action, resource);\n@id("stop") forbid(principal, action, resource);',
      }),
    });
    const [name] = register(runtime, { execute: () => 'done' });
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'a', capability: name as string, input: {} }],
    });
    assert.equal(job.status, 'failed');
    assert.deepEqual(job.steps[0]?.decision?.policies, ['stop']);
    assert.equal(job.steps[0]?.decision?.reason, 'Forbidden by policy stop');
    const plain = runtimeWith();
    const [read] = register(plain, { execute: () => 'done' });
    const other = await plain.executePlan({
      version: '1.0',
      steps: [{ id: 'a', capability: read as string, input: {} }],
    });
    assert.equal(other.steps[0]?.decision?.outcome, 'allow');
    assert.equal('policies' in (other.steps[0]?.decision ?? {}), false);
    await Promise.all([runtime.close(), plain.close()]);
  });

  it('stops a step for approval, and runs it once approved', async () => {
    const runtime = runtimeWith({
      approvals: { approver: { canApprove: () => true } },
      authorizer: cedarAuthorizer({
        policies: '@id("ask") @warrant("require_approval") permit(principal, action, resource);',
      }),
    });
    const [name] = register(runtime, { risk: 'write', execute: () => 'sent' });
    const job = await runtime.executePlan(
      { version: '1.0', steps: [{ id: 'a', capability: name as string, input: { n: 1 } }] },
      { caller: { id: 'alice' } },
    );
    assert.equal(job.status, 'awaiting_approval');
    const decision = job.steps[0]?.decision;
    assert.equal(decision?.outcome, 'approval_required');
    assert.deepEqual(decision?.policies, ['ask']);
    // The request's event proves the decision's policies, so the waiting job verifies.
    const requested = job.events.find((event) => event.type === 'approval.requested');
    assert.deepEqual(requested?.data?.policies, ['ask']);
    assert.equal((await runtime.verifyJob(job.id))?.ok, true);
    const done = await runtime.decideApproval({
      jobId: job.id,
      stepId: 'a',
      inputDigest: decision?.inputDigest as string,
      approver: { id: 'bob' },
      decision: 'approve',
    });
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.steps[0]?.decision?.policies, ['ask']);
    assert.equal(done.steps[0]?.decision?.outcome, 'allow');
    assert.equal((await runtime.verifyJob(done.id))?.ok, true);
    await runtime.close();
  });
});
