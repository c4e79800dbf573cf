// Acting for someone (docs/api.md, "Callers: acting for someone"): the chain rules the one caller
// checker applies, the library edge (executePlan/submitPlan refuse a hostile chain with
// CALLER_INVALID and admit nothing), effectiveScopes, and what the runtime records and shows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  effectiveScopes,
  type ExecutionCaller,
  type RuntimeEvent,
} from '../../src/index.js';
import {
  actingFor,
  actorsOf,
  chainIds,
  chainProblem,
  currentActor,
  MAX_ACTORS,
} from '../../src/callers/actor-chain.js';
import { frozenCallerCopy } from '../../src/callers/caller-check.js';
import { snapshotCaller } from '../../src/callers/caller-snapshot.js';
import { register, recordingAuthorizer } from '../support/runtime-fixtures.js';

/** A chain of `count` actors a1 (acting now), a2, ... for the subject `ada`. */
function chain(count: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  let actor: Record<string, unknown> | undefined;
  for (let index = count; index >= 1; index--)
    actor = { id: `a${index}`, scopes: ['x'], ...(actor === undefined ? {} : { actor }) };
  return { id: 'ada', scopes: ['x', 'y'], ...extra, ...(actor === undefined ? {} : { actor }) };
}

/** The hostile chains, each with the reason the checker gives. */
const HOSTILE: [string, Record<string, unknown>, RegExp][] = [
  ['five actors deep', chain(5), /^holds more than 4 actors$/],
  [
    'a cycle back to the subject',
    { id: 'ada', actor: { id: 'bot', actor: { id: 'ada' } } },
    /^actor\.actor\.id "ada" appears twice in the chain \(a cycle\)$/,
  ],
  [
    'a cycle between actors',
    { id: 'ada', actor: { id: 'bot', actor: { id: 'helper', actor: { id: 'bot' } } } },
    /^actor\.actor\.actor\.id "bot" appears twice/,
  ],
  [
    "an actor of another tenant than the caller's",
    { id: 'ada', tenant: 'acme', actor: { id: 'bot', tenant: 'globex' } },
    /^actor\.tenant must be the caller's tenant$/,
  ],
  [
    'an actor with a tenant, the caller without one',
    { id: 'ada', actor: { id: 'bot', tenant: 'acme' } },
    /^actor\.tenant must be the caller's tenant$/,
  ],
  [
    'an actor without an id',
    { id: 'ada', actor: { scopes: [] } },
    /^actor\.id must be a non-empty/,
  ],
  ['an actor with an empty id', { id: 'ada', actor: { id: '' } }, /^actor\.id must be a non-empty/],
  ['an actor that is a string', { id: 'ada', actor: 'bot' }, /^actor must be an object$/],
  ['an actor that is an array', { id: 'ada', actor: [{ id: 'bot' }] }, /^actor must be an object$/],
  ['an actor that is null', { id: 'ada', actor: null }, /^actor must be an object$/],
  [
    "an actor's scopes that are not strings",
    { id: 'ada', actor: { id: 'bot', scopes: [1] } },
    /^actor\.scopes must be an array of strings$/,
  ],
  [
    "an actor's metadata that is not an object",
    { id: 'ada', actor: { id: 'bot', metadata: [] } },
    /^actor\.metadata must be an object$/,
  ],
  [
    'an actor for a caller without an id',
    { scopes: ['x'], actor: { id: 'bot' } },
    /^id must be a non-empty string/,
  ],
];

describe('chainProblem', () => {
  it('admits a caller without an actor, and chains of 1 to 4 actors of one tenant', () => {
    assert.equal(chainProblem({ id: 'ada' }), undefined);
    assert.equal(chainProblem({}), undefined);
    for (let count = 1; count <= MAX_ACTORS; count++)
      assert.equal(chainProblem(chain(count, { tenant: 't' })), undefined, `${count} actors`);
    assert.equal(
      chainProblem({ id: 'ada', tenant: 't', actor: { id: 'bot', tenant: 't' } }),
      undefined,
    );
  });

  it('refuses every hostile chain, naming where', () => {
    for (const [name, caller, reason] of HOSTILE)
      assert.match(chainProblem(caller) ?? 'admitted', reason, name);
  });
});

describe('the one caller checker refuses hostile chains at every entry', () => {
  it('frozenCallerCopy (the edges): ok false, the reason under the path it is given', () => {
    for (const [name, caller, reason] of HOSTILE) {
      const checked = frozenCallerCopy(caller, 'callers[0].caller');
      assert.equal(checked.ok, false, name);
      const text = (checked as { reason: string }).reason;
      assert.ok(text.startsWith('callers[0].caller.'), text);
      assert.match(text.slice('callers[0].caller.'.length), reason, name);
    }
  });

  it('snapshotCaller (the runtime): CALLER_INVALID naming the path', () => {
    for (const [name, caller] of HOSTILE)
      assert.throws(
        () => snapshotCaller(caller),
        { code: 'CALLER_INVALID', name: 'TypeError' },
        name,
      );
    assert.throws(() => snapshotCaller(chain(5)), {
      message: 'options.caller.holds more than 4 actors',
    });
  });

  it('keeps a good chain whole, deeply frozen', () => {
    const source = chain(2, { tenant: 't' });
    const snapshot = snapshotCaller(source) as ExecutionCaller;
    assert.deepEqual(snapshot, source);
    assert.ok(Object.isFrozen(snapshot.actor?.actor));
    const checked = frozenCallerCopy(source);
    assert.ok(checked.ok);
    assert.ok(Object.isFrozen(checked.caller.actor));
  });
});

describe('effectiveScopes', () => {
  it("is the caller's scopes that every actor holds too", () => {
    assert.deepEqual(
      effectiveScopes({
        id: 'ada',
        scopes: ['mail', 'files', 'calendar', 'mail'],
        actor: { id: 'a', scopes: ['calendar', 'mail'], actor: { id: 'b', scopes: ['mail'] } },
      }),
      ['mail'],
    );
  });

  it('is empty when an actor holds no scopes, or the caller none', () => {
    assert.deepEqual(effectiveScopes({ id: 'ada', scopes: ['mail'], actor: { id: 'bot' } }), []);
    assert.deepEqual(
      effectiveScopes({ id: 'ada', actor: { id: 'bot', scopes: ['mail'] } }),
      [],
      'an actor cannot add scopes the subject lacks',
    );
    assert.deepEqual(effectiveScopes(undefined), []);
  });

  it("is the caller's own scopes without an actor", () => {
    assert.deepEqual(effectiveScopes({ id: 'ada', scopes: ['a', 'b'] }), ['a', 'b']);
  });
});

describe('actorsOf, currentActor, chainIds, actingFor', () => {
  it('read the chain, who acts now first', () => {
    const caller = chain(3) as ExecutionCaller;
    assert.deepEqual(
      actorsOf(caller).map((actor) => actor.id),
      ['a1', 'a2', 'a3'],
    );
    assert.equal(currentActor(caller)?.id, 'a1');
    assert.deepEqual(chainIds(caller), ['ada', 'a1', 'a2', 'a3']);
    assert.deepEqual(actingFor(caller), { actor: 'a1', onBehalfOf: 'ada' });
    assert.deepEqual(actingFor({ id: 'ada' }), {});
    assert.deepEqual(actorsOf(undefined), []);
  });
});

describe('the library edge: executePlan and submitPlan', () => {
  it('refuse a hostile chain with CALLER_INVALID: no job, no authorizer call, no event', async () => {
    const authorizer = recordingAuthorizer();
    const runtime = new OperatorRuntime({ authorizer });
    try {
      const [read] = register(runtime, { execute: () => 1 }) as [string];
      const events: RuntimeEvent[] = [];
      runtime.subscribe('*', (event) => {
        events.push(event);
      });
      const plan = { version: '1.0' as const, steps: [{ id: 's', capability: read }] };
      for (const [name, caller] of HOSTILE) {
        await assert.rejects(
          runtime.executePlan(plan, { caller }),
          { code: 'CALLER_INVALID' },
          name,
        );
        await assert.rejects(
          runtime.submitPlan(plan, { caller }),
          { code: 'CALLER_INVALID' },
          name,
        );
      }
      assert.deepEqual(await runtime.listJobs(), []);
      assert.deepEqual(authorizer.calls, []);
      assert.deepEqual(events, []);
    } finally {
      await runtime.close();
    }
  });

  it('records the chain in job.caller and gives the authorizer the whole caller', async () => {
    const authorizer = recordingAuthorizer();
    const runtime = new OperatorRuntime({ authorizer });
    try {
      const [read] = register(runtime, { execute: () => 1 }) as [string];
      const caller = {
        id: 'ada',
        scopes: ['mail'],
        tenant: 't',
        actor: { id: 'assistant', scopes: ['mail'], tenant: 't', actor: { id: 'planner' } },
      };
      const job = await runtime.executePlan(
        { version: '1.0', steps: [{ id: 's', capability: read }] },
        { caller },
      );
      assert.equal(job.status, 'completed');
      assert.deepEqual(job.caller, caller);
      assert.deepEqual(authorizer.calls[0]?.caller, caller);
      assert.ok(Object.isFrozen(authorizer.calls[0]?.caller?.actor?.actor));
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
    } finally {
      await runtime.close();
    }
  });
});
