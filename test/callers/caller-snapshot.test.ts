import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CapabilityAuthorizationContext, ExecutionCaller } from '../../src/index.js';
import {
  MAX_CALLER_DEPTH,
  MAX_CALLER_VALUES,
  snapshotCaller,
} from '../../src/callers/caller-snapshot.js';
import { recordingAuthorizer, register, runtimeWith } from '../support/runtime-fixtures.js';

/** True when `value` and everything inside it is frozen. */
function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every(deeplyFrozen);
}

function rejects(caller: unknown, path: RegExp, label: string): void {
  assert.throws(
    () => snapshotCaller(caller),
    (error: Error & { code?: string }) => {
      assert.equal(error.name, 'TypeError', label);
      assert.equal(error.code, 'EXECUTE_OPTIONS_INVALID', label);
      assert.match(error.message, path, label);
      assert.ok(error.message.length <= 300, `${label}: message of ${error.message.length} chars`);
      return true;
    },
    label,
  );
}

describe('snapshotCaller()', () => {
  it('returns undefined for no caller', () => {
    assert.equal(snapshotCaller(undefined), undefined);
  });

  it('makes a deep, deeply frozen copy of JSON data', () => {
    const caller = {
      id: 'u',
      scopes: ['a'],
      metadata: { team: 'ops', roles: ['reader'], nested: { deep: [{ x: 1 }], none: null } },
      extra: [true, 1.5, 'text'],
    };
    const snapshot = snapshotCaller(caller);
    assert.deepEqual(snapshot, caller);
    assert.notEqual(snapshot, caller);
    assert.notEqual(snapshot?.metadata, caller.metadata);
    assert.notEqual(snapshot?.metadata?.roles, caller.metadata.roles);
    assert.ok(deeplyFrozen(snapshot));
    caller.scopes.push('admin');
    caller.metadata.team = 'root';
    caller.metadata.roles.push('admin');
    (caller.metadata.nested.deep[0] as { x: number }).x = 2;
    caller.extra.push('more');
    assert.deepEqual(snapshot, {
      id: 'u',
      scopes: ['a'],
      metadata: { team: 'ops', roles: ['reader'], nested: { deep: [{ x: 1 }], none: null } },
      extra: [true, 1.5, 'text'],
    });
    const roles = snapshot?.metadata?.roles as string[];
    assert.throws(() => roles.push('admin'), TypeError);
  });

  it('keeps a "__proto__" key as data, and accepts null-prototype objects', () => {
    const caller = JSON.parse('{"id":"u","metadata":{"__proto__":{"admin":true}}}') as object;
    const snapshot = snapshotCaller(caller);
    const metadata = snapshot?.metadata as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(metadata), Object.prototype);
    assert.deepEqual(Object.keys(metadata), ['__proto__']);
    assert.equal((metadata as { admin?: unknown }).admin, undefined);
    const bare = Object.assign(Object.create(null) as object, { id: 'n' });
    assert.deepEqual({ ...snapshotCaller(bare) }, { id: 'n' });
  });

  it('rejects callers that are not objects, a non-string id, scopes that are not strings and metadata that is not an object', () => {
    for (const bad of [
      null,
      { id: 5 },
      { id: null },
      'user',
      42,
      ['a'],
      { scopes: 'admin' },
      { scopes: [1] },
      { metadata: 'x' },
      { metadata: [] },
      { id: 'u', tenant: 1 },
      { id: 'u', tenant: null },
      { id: 'u', tenant: ['a'] },
    ]) {
      assert.throws(
        () => snapshotCaller(bad),
        { name: 'TypeError', code: 'EXECUTE_OPTIONS_INVALID' },
        JSON.stringify(bad),
      );
    }
  });

  it('rejects every value that is not JSON data with EXECUTE_OPTIONS_INVALID naming its path', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    const throwingTrap = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('trap');
        },
      },
    );
    const throwingGet = new Proxy(
      { a: 1 },
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    const throwingGetter = Object.defineProperty({}, 'roles', {
      enumerable: true,
      get() {
        throw new Error('getter');
      },
    });
    class Account {
      id = 'a';
    }
    const sparse: string[] = ['a'];
    sparse[2] = 'c';
    const named = Object.assign(['a'], { role: 'admin' });
    const cases: [unknown, RegExp][] = [
      [{ metadata: { run: () => 1 } }, /caller\.metadata\.run/],
      [{ metadata: { when: new Date(0) } }, /caller\.metadata\.when/],
      [{ metadata: { map: new Map() } }, /caller\.metadata\.map/],
      [{ metadata: { set: new Set() } }, /caller\.metadata\.set/],
      [{ metadata: { url: new URL('https://example.com') } }, /caller\.metadata\.url/],
      [{ metadata: { boxed: Object('text') as unknown } }, /caller\.metadata\.boxed/],
      [{ metadata: { account: new Account() } }, /caller\.metadata\.account/],
      [{ metadata: { symbol: Symbol('s') } }, /caller\.metadata\.symbol/],
      [{ metadata: { big: 10n } }, /caller\.metadata\.big/],
      [{ metadata: { nan: NaN } }, /caller\.metadata\.nan/],
      [{ metadata: { inf: [Infinity] } }, /caller\.metadata\.inf\[0\]/],
      [{ metadata: { none: undefined } }, /caller\.metadata\.none/],
      [{ metadata: { cycle } }, /caller\.metadata\.cycle\.self/],
      [{ metadata: { revoked } }, /caller\.metadata\.revoked/],
      [{ metadata: { trap: throwingTrap } }, /caller\.metadata\.trap/],
      [{ metadata: { trap: throwingGet } }, /caller\.metadata\.trap/],
      [{ metadata: throwingGetter }, /caller\.metadata\.roles/],
      [{ scopes: sparse }, /caller\.scopes\[1\]/],
      [{ metadata: { named } }, /caller\.metadata\.named\.role/],
      [{ [Symbol('key')]: 1 }, /caller/],
      [revoked, /caller/],
      [throwingTrap, /caller/],
      [new Account(), /caller/],
    ];
    for (const [caller, path] of cases) rejects(caller, path, path.source);
  });

  it('bounds the path named in the message, and the depth and size of a caller', () => {
    rejects({ metadata: { ['k'.repeat(100_000)]: () => 1 } }, /caller\.metadata\./, 'long key');
    let deep: unknown = 'leaf';
    for (let level = 0; level < MAX_CALLER_DEPTH + 5; level++) deep = [deep];
    rejects({ metadata: { deep } }, /deeper than/, 'depth');
    let nested: unknown = 'leaf';
    for (let level = 0; level < MAX_CALLER_DEPTH - 3; level++) nested = [nested];
    assert.ok(snapshotCaller({ metadata: { nested } }));
    const wide = Array.from({ length: MAX_CALLER_VALUES + 1 }, () => 1);
    rejects({ metadata: { wide } }, /more than/, 'size');
    // A structure shared at many places counts at each place, so it cannot blow up the copy.
    let shared: unknown = [1];
    for (let level = 0; level < 40; level++) shared = [shared, shared];
    rejects({ metadata: { shared } }, /more than/, 'shared');
  });
});

describe('snapshotCaller() given a caller that cannot change', () => {
  /** Freezes a value and everything inside it. */
  const deepFreeze = <T>(value: T): T => {
    if (typeof value === 'object' && value !== null) {
      Object.values(value).forEach(deepFreeze);
      Object.freeze(value);
    }
    return value;
  };

  it('gives a deeply frozen caller, and a snapshot given back, the same snapshot', () => {
    const caller = deepFreeze({ id: 'svc', scopes: ['a'], metadata: { team: ['ops'] } });
    const first = snapshotCaller(caller);
    assert.notEqual(first, caller, 'still a copy');
    assert.deepEqual(first, caller);
    assert.equal(snapshotCaller(caller), first);
    assert.equal(snapshotCaller(first), first);
  });

  it('copies afresh a caller that could change: not frozen, frozen on top only, or with a getter', () => {
    const open = { id: 'a', metadata: { n: 1 } };
    const one = snapshotCaller(open);
    open.metadata.n = 2;
    assert.equal((snapshotCaller(open)?.metadata as { n: number }).n, 2);
    assert.equal((one?.metadata as { n: number }).n, 1);

    const inner = { n: 1 };
    const shallow = Object.freeze({ id: 'b', metadata: inner });
    snapshotCaller(shallow);
    inner.n = 2;
    assert.equal((snapshotCaller(shallow)?.metadata as { n: number }).n, 2);

    let reads = 0;
    const withGetter = Object.freeze(
      Object.defineProperty({}, 'id', {
        get: () => `read ${++reads}`,
        enumerable: true,
      }),
    );
    assert.equal(snapshotCaller(withGetter)?.id, 'read 1');
    assert.equal(snapshotCaller(withGetter)?.id, 'read 2');

    let elementReads = 0;
    const list: string[] = [];
    Object.defineProperty(list, 0, { get: () => `s${++elementReads}`, enumerable: true });
    const withElementGetter = deepFreeze({ id: 'c', scopes: list });
    const before = elementReads;
    assert.deepEqual(snapshotCaller(withElementGetter)?.scopes, [`s${before + 1}`]);
    assert.deepEqual(snapshotCaller(withElementGetter)?.scopes, [`s${before + 2}`]);

    const proxied = new Proxy(deepFreeze({ id: 'd' }), {});
    assert.notEqual(snapshotCaller(proxied), snapshotCaller(proxied));
  });

  it('records the one snapshot for every job of a frozen caller, and a -0 as 0', async () => {
    const runtime = runtimeWith();
    const [name] = register(runtime, { execute: () => 1 });
    const plan = { version: '1.0' as const, steps: [{ id: 'x', capability: name as string }] };
    const caller = deepFreeze({ id: 'svc', metadata: { n: 1 } });
    const [one, two] = await Promise.all([
      runtime.executePlan(plan, { caller }),
      runtime.executePlan(plan, { caller }),
    ]);
    assert.equal(one.caller, two.caller);
    const recorded = await runtime.getJob(one.id);
    assert.equal(recorded?.caller, one.caller, 'the record shares the frozen snapshot');
    const zero = await runtime.executePlan(plan, { caller: { id: 'z', metadata: { n: -0 } } });
    assert.ok(Object.is((zero.caller?.metadata as { n: number }).n, -0), 'the caller as given');
    const zeroRecord = await runtime.getJob(zero.id);
    assert.ok(Object.is((zeroRecord?.caller?.metadata as { n: number }).n, 0), 'recorded as 0');
    await runtime.close();
  });
});

describe('the caller of executePlan()', () => {
  const roleAuthorizer = () =>
    recordingAuthorizer((context: CapabilityAuthorizationContext) => {
      if (context.capability.risk === 'read') return { decision: 'allow' };
      const roles = (context.caller?.metadata as { roles?: unknown } | undefined)?.roles;
      return Array.isArray(roles) && roles.includes('admin')
        ? { decision: 'allow' }
        : { decision: 'deny', reason: 'admins only' };
    });

  it('cannot be changed by a capability of an earlier step: the write of step 2 stays denied', async () => {
    const authorizer = roleAuthorizer();
    const runtime = runtimeWith({ authorizer });
    let written = 0;
    const [read, write] = register(
      runtime,
      {
        execute: ({ context }) => {
          const roles = (context.caller?.metadata as { roles: string[] }).roles;
          try {
            roles.push('admin');
          } catch {
            // frozen: the push is refused
          }
          return 'read';
        },
      },
      { risk: 'write', execute: () => ++written },
    );
    const caller: ExecutionCaller = { id: 'eve', metadata: { roles: ['reader'] } };
    const job = await runtime.executePlan(
      {
        version: '1.0',
        steps: [
          { id: 'one', capability: read as string },
          { id: 'two', capability: write as string },
        ],
      },
      { caller },
    );
    assert.equal(job.status, 'failed');
    assert.equal(job.error, 'admins only');
    assert.equal(written, 0);
    assert.deepEqual(authorizer.calls[1]?.caller?.metadata, { roles: ['reader'] });
    await runtime.close();
  });

  it('cannot be changed by the submitter after executePlan() was called', async () => {
    const authorizer = roleAuthorizer();
    const runtime = runtimeWith({ authorizer });
    let written = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const [read, write] = register(
      runtime,
      { execute: () => gate.then(() => 'read') },
      { risk: 'write', execute: () => ++written },
    );
    const caller = { id: 'eve', metadata: { roles: ['reader'] } };
    const pending = runtime.executePlan(
      {
        version: '1.0',
        steps: [
          { id: 'one', capability: read as string },
          { id: 'two', capability: write as string },
        ],
      },
      { caller },
    );
    caller.metadata.roles.push('admin');
    release();
    const job = await pending;
    assert.equal(job.status, 'failed');
    assert.equal(written, 0);
    await runtime.close();
  });

  it('rejects a caller that is not JSON data, or whose getters throw, before any job', async () => {
    const authorizer = recordingAuthorizer();
    const runtime = runtimeWith({ authorizer });
    const [name] = register(runtime, { execute: () => 1 });
    const plan = { version: '1.0' as const, steps: [{ id: 'a', capability: name as string }] };
    const options = [
      { caller: { metadata: { when: new Date() } } },
      Object.defineProperty({}, 'caller', {
        get() {
          throw new Error('options getter');
        },
      }),
      {
        caller: Object.defineProperty({}, 'id', {
          enumerable: true,
          get() {
            throw new Error('caller getter');
          },
        }),
      },
    ];
    for (const option of options) {
      await assert.rejects(runtime.executePlan(plan, option as never), {
        code: 'EXECUTE_OPTIONS_INVALID',
      });
    }
    assert.equal(authorizer.calls.length, 0);
    assert.deepEqual(await runtime.listJobs(), []);
    await runtime.close();
  });
});
