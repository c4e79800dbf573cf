import assert from 'node:assert/strict';
import { mkdirSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  CALLER_RESOLVER_MAX_BYTES,
  CHALLENGE_NO_CREDENTIALS,
  createResolverAuthenticator,
  isAuthOptionsError,
  loadCallerResolver,
  type AuthRequest,
  type AuthResult,
  type CallerResolver,
} from '../../../src/http/auth/index.js';
import type { ExecutionCaller } from '../../../src/index.js';
import { assertCaller, assertRefused, request, tempDir } from './fixtures/helpers.js';

const dir = tempDir();
after(() => dir.remove());

const resolverOf = (fn: (request: AuthRequest) => unknown) => fn as CallerResolver;

describe('--caller-resolver: what the resolver answers', () => {
  it('passes method, url, headers and ip, and returns a deeply frozen copy of the caller', async () => {
    const seen: AuthRequest[] = [];
    const returned = { id: 'alice', scopes: ['plans:write'], metadata: { team: { name: 'ops' } } };
    const auth = createResolverAuthenticator((req) => {
      seen.push(req);
      return returned;
    });
    const caller = assertCaller(
      await auth.authenticate({
        ...request('Bearer x'),
        headers: { authorization: 'Bearer x', 'x-team': 'ops' },
      }),
    );
    assert.deepEqual(seen, [
      {
        method: 'POST',
        url: '/api/plans',
        headers: { authorization: 'Bearer x', 'x-team': 'ops' },
        ip: '127.0.0.1',
      },
    ]);
    assert.ok(
      Object.isFrozen(seen[0]) && Object.isFrozen(seen[0]?.headers),
      'the resolver cannot edit the request',
    );
    assert.deepEqual(caller, returned);
    assert.notEqual(caller, returned);
    assert.ok(Object.isFrozen(caller) && Object.isFrozen(caller.scopes));
    assert.ok(Object.isFrozen((caller.metadata as { team: object }).team));
    returned.scopes.push('admin');
    assert.deepEqual(caller.scopes, ['plans:write'], 'later edits by the resolver change nothing');
  });

  it('may answer an actor chain: checked by the one checker, marked as having read who acts (issue 50)', async () => {
    const chain = { id: 'ada', tenant: 't', actor: { id: 'assistant', tenant: 't', scopes: [] } };
    const result = await createResolverAuthenticator(() => chain).authenticate(request());
    assert.deepEqual(assertCaller(result), chain);
    assert.equal(result.ok && result.delegated, true);
    const plain = await createResolverAuthenticator(() => ({ id: 'ada' })).authenticate(request());
    assert.equal(plain.ok && plain.delegated, undefined);
    const hostile: [unknown, RegExp][] = [
      [
        {
          id: 'ada',
          actor: {
            id: 'a',
            actor: { id: 'b', actor: { id: 'c', actor: { id: 'd', actor: { id: 'e' } } } },
          },
        },
        /caller\.holds more than 4 actors/,
      ],
      [{ id: 'ada', actor: { id: 'bot', actor: { id: 'ada' } } }, /appears twice in the chain/],
      [
        { id: 'ada', tenant: 't', actor: { id: 'bot', tenant: 'u' } },
        /actor\.tenant must be the caller's tenant/,
      ],
      [{ id: 'ada', actor: { scopes: [] } }, /actor\.id must be a non-empty string/],
    ];
    for (const [answer, reason] of hostile)
      assertRefused(
        await createResolverAuthenticator(() => answer as ExecutionCaller).authenticate(request()),
        CHALLENGE_NO_CREDENTIALS,
        reason,
      );
  });

  it('accepts an async resolver', async () => {
    const auth = createResolverAuthenticator(async () => ({ id: 'async' }));
    assert.equal(assertCaller(await auth.authenticate(request())).id, 'async');
  });

  it('answers undefined with 401 Bearer and no log', async () => {
    assertRefused(
      await createResolverAuthenticator(() => undefined).authenticate(request()),
      CHALLENGE_NO_CREDENTIALS,
    );
    assertRefused(
      await createResolverAuthenticator(async () => undefined).authenticate(request()),
      CHALLENGE_NO_CREDENTIALS,
    );
  });

  it('answers a throw (sync or async, any value) with 401 Bearer and one log line', async () => {
    const throwing: CallerResolver[] = [
      () => {
        throw new Error('directory down\n  at secret stack');
      },
      async () => {
        throw new Error('directory down');
      },
      () => Promise.reject('a string'),
      () => {
        throw null;
      },
    ];
    for (const resolver of throwing) {
      assertRefused(
        await createResolverAuthenticator(resolver).authenticate(request()),
        CHALLENGE_NO_CREDENTIALS,
        /^caller resolver threw: /,
      );
    }
    const result = await createResolverAuthenticator(throwing[0] as CallerResolver).authenticate(
      request(),
    );
    assert.equal((result as { log?: string }).log, 'caller resolver threw: directory down');
  });

  it('answers a hang with 401 Bearer and one log line after the time-out', async () => {
    const auth = createResolverAuthenticator(() => new Promise<undefined>(() => {}), {
      timeoutMs: 50,
    });
    assertRefused(
      await auth.authenticate(request()),
      CHALLENGE_NO_CREDENTIALS,
      /^caller resolver gave no answer within 50 ms$/,
    );
  });

  it('waits 5 s by default, no more', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const auth = createResolverAuthenticator(() => new Promise<undefined>(() => {}));
    let result: AuthResult | undefined;
    void auth.authenticate(request()).then((value) => (result = value));
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    await turn();
    t.mock.timers.tick(4999);
    await turn();
    assert.equal(result, undefined, 'still waiting after 4999 ms');
    t.mock.timers.tick(1);
    await turn();
    assert.ok(result !== undefined, 'answered at 5000 ms');
    assertRefused(result, CHALLENGE_NO_CREDENTIALS, /within 5000 ms/);
  });

  it('a late rejection after the time-out is not an unhandled rejection', async () => {
    let rejectLater: (reason: unknown) => void = () => {};
    const auth = createResolverAuthenticator(
      () => new Promise<undefined>((_, reject) => (rejectLater = reject)),
      { timeoutMs: 10 },
    );
    assertRefused(await auth.authenticate(request()), CHALLENGE_NO_CREDENTIALS, /no answer/);
    rejectLater(new Error('too late'));
    await new Promise((resolve) => setImmediate(resolve));
  });

  it('answers a malformed caller with 401 Bearer and one log line naming the problem', async () => {
    const cyclic: Record<string, unknown> = { id: 'c' };
    cyclic.self = cyclic;
    const cases: [unknown, RegExp][] = [
      [null, /caller must be an object/],
      ['alice', /caller must be an object/],
      [['alice'], /caller must be an object/],
      [{}, /caller\.id must be a non-empty string/],
      [{ id: '' }, /caller\.id must be a non-empty string/],
      [{ id: 1 }, /caller\.id must be a non-empty string/],
      [{ id: 'a', scopes: 'admin' }, /caller\.scopes must be an array of strings/],
      [{ id: 'a', metadata: [] }, /caller\.metadata must be an object/],
      [{ id: 'a', tenant: 7 }, /caller\.tenant must be a string/],
      [{ id: 'a', tenant: ['acme'] }, /caller\.tenant must be a string/],
      [{ id: 'a', when: new Date(0) }, /caller\.when is not a plain object/],
      [{ id: 'a', n: Number.NaN }, /caller\.n is not a finite number/],
      [{ id: 'a', big: 1n }, /caller\.big is not JSON data/],
      [{ id: 'a', f: () => 1 }, /caller\.f is not JSON data/],
      [{ id: 'a', u: undefined }, /caller\.u is not JSON data/],
      [{ id: 'a', m: new Map() }, /caller\.m is not a plain object/],
      [cyclic, /caller\.self.* is nested deeper than 64 levels \(or cyclic\)/],
      [
        Object.defineProperty({ id: 'a' }, 'x', {
          enumerable: true,
          get: () => {
            throw new Error('trap');
          },
        }),
        /caller could not be read/,
      ],
      [
        new Proxy(
          { id: 'a' },
          {
            ownKeys: () => {
              throw new Error('trap');
            },
          },
        ),
        /caller could not be read/,
      ],
    ];
    for (const [value, reason] of cases) {
      const result = await createResolverAuthenticator(resolverOf(() => value)).authenticate(
        request(),
      );
      assertRefused(
        result,
        CHALLENGE_NO_CREDENTIALS,
        /^caller resolver returned a malformed caller: /,
      );
      assert.match((result as { log: string }).log, reason);
    }
  });
});

describe('--caller-resolver: loading the module', () => {
  const load = (file: string) => loadCallerResolver(file);
  async function refusedAtStart(file: string, message: RegExp): Promise<void> {
    await assert.rejects(load(file), (error: unknown) => {
      assert.ok(isAuthOptionsError(error), `not a coded error: ${String(error)}`);
      assert.match((error as Error).message, message);
      assert.ok(!(error as Error).message.includes('\n'));
      return true;
    });
  }

  it('loads the default export of an ES module file', async () => {
    const file = dir.file(
      'resolver.mjs',
      `export default (request) => request.headers['x-user'] ? { id: request.headers['x-user'] } : undefined;\n`,
    );
    const auth = createResolverAuthenticator(await load(file));
    const caller: ExecutionCaller = assertCaller(
      await auth.authenticate({ ...request(), headers: { 'x-user': 'eve' } }),
    );
    assert.equal(caller.id, 'eve');
    assertRefused(await auth.authenticate(request()), CHALLENGE_NO_CREDENTIALS);
  });

  it('uses the loader it is given (the program may swap in its own)', async () => {
    const calls: string[] = [];
    const resolver = await loadCallerResolver('virtual.mjs', async (file) => {
      calls.push(file);
      return () => ({ id: 'v' });
    });
    assert.deepEqual(calls, ['virtual.mjs']);
    assert.equal(
      assertCaller(await createResolverAuthenticator(resolver).authenticate(request())).id,
      'v',
    );
  });

  it('refuses a module without a function default export', async () => {
    await refusedAtStart(
      dir.file('none.mjs', 'export const x = 1;\n'),
      /the default export must be a function/,
    );
    await refusedAtStart(
      dir.file('object.mjs', 'export default { id: "a" };\n'),
      /the default export must be a function/,
    );
  });

  it('refuses a missing file, a directory, a file over 10 MiB and a module that fails to load', async () => {
    await refusedAtStart(
      join(dir.path, 'missing.mjs'),
      /--caller-resolver .*missing\.mjs: cannot open \(ENOENT\)/,
    );
    const folder = join(dir.path, 'folder.mjs');
    mkdirSync(folder);
    await refusedAtStart(folder, /not a regular file/);
    const big = dir.file('big.mjs', '');
    truncateSync(big, CALLER_RESOLVER_MAX_BYTES + 1);
    await refusedAtStart(big, /larger than 10485760 bytes/);
    await refusedAtStart(dir.file('broken.mjs', 'export default (;\n'), /could not be loaded \(/);
    await refusedAtStart(
      dir.file('throws.mjs', 'throw new Error("boom at load");\n'),
      /could not be loaded \(boom at load\)/,
    );
  });
});
