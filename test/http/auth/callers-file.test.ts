import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  CALLERS_FILE_MAX_BYTES,
  CHALLENGE_INVALID_TOKEN,
  CHALLENGE_NO_CREDENTIALS,
  isAuthOptionsError,
  loadCallersFile,
} from '../../../src/http/auth/index.js';
import { assertCaller, assertRefused, bearer, request, tempDir } from './fixtures/helpers.js';

const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const dir = tempDir();
after(() => dir.remove());

function callersFile(callers: unknown, mode = 0o600): string {
  return dir.file(
    `callers-${Math.random().toString(36).slice(2)}.json`,
    JSON.stringify({ callers }),
    mode,
  );
}

async function refusedAtStart(path: string, message: RegExp): Promise<void> {
  await assert.rejects(loadCallersFile(path), (error: unknown) => {
    assert.ok(isAuthOptionsError(error), `not a coded error: ${String(error)}`);
    assert.match((error as Error).message, message);
    assert.ok(!(error as Error).message.includes('\n'), 'one line');
    return true;
  });
}

describe('--callers', () => {
  const entries = [
    {
      tokenSha256: sha('alice-token'),
      caller: { id: 'alice', scopes: ['plans:write'], metadata: { team: 'ops' } },
    },
    { tokenSha256: sha('bob-token').toUpperCase(), caller: { id: 'bob' } },
    {
      tokenSha256: sha('carol-token'),
      caller: { id: 'carol', scopes: [], extra: [1, null, true] },
    },
  ];

  it('maps each token to its caller (first, middle and last entry), deeply frozen', async () => {
    const { authenticator, count, warnings } = await loadCallersFile(callersFile(entries));
    assert.equal(count, 3);
    assert.deepEqual(warnings, []);
    const alice = assertCaller(await authenticator.authenticate(request(bearer('alice-token'))));
    assert.deepEqual(alice, entries[0]?.caller);
    assert.ok(
      Object.isFrozen(alice) && Object.isFrozen(alice.scopes) && Object.isFrozen(alice.metadata),
    );
    assert.deepEqual(assertCaller(await authenticator.authenticate(request(bearer('bob-token')))), {
      id: 'bob',
    });
    const carol = assertCaller(await authenticator.authenticate(request(bearer('carol-token'))));
    assert.equal(carol.id, 'carol');
    assert.ok(Object.isFrozen(carol.extra));
  });

  it('refuses a missing header, another scheme, an unknown token and a digest given as the token', async () => {
    const { authenticator } = await loadCallersFile(callersFile(entries));
    assertRefused(await authenticator.authenticate(request()), CHALLENGE_NO_CREDENTIALS);
    assertRefused(
      await authenticator.authenticate(request('Basic YWxpY2U6eA==')),
      CHALLENGE_NO_CREDENTIALS,
    );
    assertRefused(await authenticator.authenticate(request('Bearer')), CHALLENGE_INVALID_TOKEN);
    assertRefused(
      await authenticator.authenticate(request(bearer('mallory'))),
      CHALLENGE_INVALID_TOKEN,
    );
    assertRefused(
      await authenticator.authenticate(request(bearer(sha('alice-token')))),
      CHALLENGE_INVALID_TOKEN,
    );
  });

  it('reads the file once: later edits change nothing', async () => {
    const path = callersFile(entries);
    const { authenticator } = await loadCallersFile(path);
    writeFileSync(
      path,
      JSON.stringify({ callers: [{ tokenSha256: sha('new'), caller: { id: 'new' } }] }),
    );
    assertCaller(await authenticator.authenticate(request(bearer('alice-token'))));
    assertRefused(
      await authenticator.authenticate(request(bearer('new'))),
      CHALLENGE_INVALID_TOKEN,
    );
  });

  it('warns when the file is accessible by group or others', async () => {
    for (const mode of [0o644, 0o640, 0o604, 0o620]) {
      const { warnings } = await loadCallersFile(callersFile(entries, mode));
      assert.equal(warnings.length, 1);
      assert.match(
        warnings[0] as string,
        new RegExp(`accessible by group or others \\(mode 0${mode.toString(8)}\\).*chmod 600`),
      );
    }
    assert.deepEqual((await loadCallersFile(callersFile(entries, 0o400))).warnings, []);
  });

  describe('mayActFor and Warrant-On-Behalf-Of (issue 50)', () => {
    const acting = [
      {
        tokenSha256: sha('assistant-token'),
        caller: { id: 'assistant', scopes: ['mail:send'], tenant: 'acme' },
        mayActFor: ['ada'],
      },
      {
        tokenSha256: sha('ada-token'),
        caller: {
          id: 'ada',
          scopes: ['mail:send', 'files:read'],
          tenant: 'acme',
          metadata: { a: 1 },
        },
      },
      {
        tokenSha256: sha('bob-token'),
        caller: { id: 'bob', scopes: ['mail:send'], tenant: 'acme' },
      },
    ];
    const onBehalf = (token: string, id: string) => ({
      ...request(bearer(token)),
      headers: { authorization: bearer(token), 'warrant-on-behalf-of': id },
    });

    it("makes the named entry the caller, with the token's entry as its actor", async () => {
      const { authenticator } = await loadCallersFile(callersFile(acting));
      const result = await authenticator.authenticate(onBehalf('assistant-token', 'ada'));
      const caller = assertCaller(result);
      assert.deepEqual(caller, { ...acting[1]?.caller, actor: acting[0]?.caller });
      assert.equal(result.ok && result.delegated, true);
      assert.ok(Object.isFrozen(caller.actor));
      // Without the header the token is itself, not delegated.
      const itself = await authenticator.authenticate(request(bearer('assistant-token')));
      assert.deepEqual(assertCaller(itself), acting[0]?.caller);
      assert.equal(itself.ok && itself.delegated, undefined);
    });

    it('refuses (401) the header naming an id not in mayActFor, not in the file, or from a token without mayActFor', async () => {
      const { authenticator } = await loadCallersFile(callersFile(acting));
      for (const [token, id] of [
        ['assistant-token', 'bob'],
        ['assistant-token', 'nobody'],
        ['assistant-token', 'assistant'],
        ['assistant-token', ''],
        ['ada-token', 'bob'],
        ['bob-token', 'ada'],
        ['unknown-token', 'ada'],
      ] as const)
        assertRefused(
          await authenticator.authenticate(onBehalf(token, id)),
          CHALLENGE_INVALID_TOKEN,
        );
    });

    const startCases: [string, unknown[], RegExp][] = [
      [
        'an id no entry has',
        [{ ...acting[0], mayActFor: ['nobody'] }, acting[1]],
        /callers\[0\]\.mayActFor\[0\] "nobody" must name the caller id of exactly one entry \(0 have it\)/,
      ],
      [
        'an id two entries have',
        [acting[0], acting[1], { ...acting[1], tokenSha256: sha('ada-2') }],
        /must name the caller id of exactly one entry \(2 have it\)/,
      ],
      [
        'its own id',
        [{ ...acting[0], mayActFor: ['assistant'] }],
        /names the entry's own caller id/,
      ],
      [
        'not an array',
        [{ ...acting[0], mayActFor: 'ada' }, acting[1]],
        /mayActFor must be an array/,
      ],
      ['an empty id', [{ ...acting[0], mayActFor: [''] }, acting[1]], /mayActFor must be an array/],
      [
        'a subject of another tenant',
        [acting[0], { ...acting[1], caller: { id: 'ada', tenant: 'globex' } }],
        /callers\[0\]\.mayActFor\[0\] \("ada"\)\.actor\.tenant must be the caller's tenant/,
      ],
      [
        'a subject with an actor of its own',
        [
          acting[0],
          {
            ...acting[1],
            caller: { id: 'ada', tenant: 'acme', actor: { id: 'x', tenant: 'acme' } },
          },
        ],
        /names a caller that has an actor of its own/,
      ],
    ];
    for (const [name, callers, message] of startCases)
      it(`refuses at start: ${name}`, () => refusedAtStart(callersFile(callers), message));
  });

  describe('refuses a malformed file at start with one coded line naming the entry', () => {
    const cases: [string, unknown, RegExp][] = [
      ['an array at the top', [], /must be a JSON object \{ "callers": \[\.\.\.\] \}/],
      ['an unknown top-level key', { callers: entries, admins: [] }, /unknown key "admins"/],
      ['no callers', { callers: [] }, /"callers" must be a non-empty array/],
      [
        'an entry that is not an object',
        { callers: [entries[0], 'x'] },
        /callers\[1\] must be an object/,
      ],
      [
        'an unknown entry key',
        { callers: [{ ...entries[0], token: 'alice-token' }] },
        /callers\[0\] has an unknown key "token"/,
      ],
      [
        'a short digest',
        { callers: [{ tokenSha256: 'abc', caller: { id: 'a' } }] },
        /callers\[0\]\.tokenSha256 must be 64 hexadecimal digits/,
      ],
      [
        'a non-hex digest',
        { callers: [{ tokenSha256: 'g'.repeat(64), caller: { id: 'a' } }] },
        /callers\[0\]\.tokenSha256/,
      ],
      [
        'a duplicate digest (any case)',
        {
          callers: [entries[0], entries[1], { tokenSha256: sha('bob-token'), caller: { id: 'x' } }],
        },
        /callers\[2\]\.tokenSha256 repeats callers\[1\]/,
      ],
      [
        'no caller',
        { callers: [{ tokenSha256: sha('a') }] },
        /callers\[0\]\.caller must be an object/,
      ],
      [
        'a caller without id',
        { callers: [{ tokenSha256: sha('a'), caller: { scopes: [] } }] },
        /callers\[0\]\.caller\.id must be a non-empty string/,
      ],
      [
        'a numeric id',
        { callers: [{ tokenSha256: sha('a'), caller: { id: 7 } }] },
        /callers\[0\]\.caller\.id must be a non-empty string/,
      ],
      [
        'scopes not strings',
        { callers: [{ tokenSha256: sha('a'), caller: { id: 'a', scopes: ['x', 1] } }] },
        /callers\[0\]\.caller\.scopes must be an array of strings/,
      ],
      [
        'metadata not an object',
        { callers: [{ tokenSha256: sha('a'), caller: { id: 'a', metadata: 'x' } }] },
        /callers\[0\]\.caller\.metadata must be an object/,
      ],
      [
        'a tenant not a string',
        { callers: [{ tokenSha256: sha('a'), caller: { id: 'a', tenant: 1 } }] },
        /callers\[0\]\.caller\.tenant must be a string/,
      ],
    ];
    for (const [name, data, message] of cases) {
      it(name, async () => refusedAtStart(dir.file('bad.json', JSON.stringify(data)), message));
    }

    it('invalid JSON', () =>
      refusedAtStart(dir.file('bad.json', '{"callers": ['), /not valid JSON/));
    it('a number too large to be finite', () =>
      refusedAtStart(
        dir.file(
          'bad.json',
          `{"callers":[{"tokenSha256":"${sha('a')}","caller":{"id":"a","n":1e999}}]}`,
        ),
        /callers\[0\]\.caller\.n is not a finite number/,
      ));
    it('a "__proto__" key in a caller', () =>
      refusedAtStart(
        dir.file(
          'bad.json',
          `{"callers":[{"tokenSha256":"${sha('a')}","caller":{"id":"a","__proto__":{}}}]}`,
        ),
        /callers\[0\]\.caller has a "__proto__" key/,
      ));
    it('not UTF-8', () => {
      const path = join(dir.path, 'latin1.json');
      writeFileSync(path, Buffer.from([0x7b, 0xff, 0x7d]));
      return refusedAtStart(path, /not UTF-8 text/);
    });
    it('a missing file', () =>
      refusedAtStart(
        join(dir.path, 'nope.json'),
        /--callers .*nope\.json: cannot open \(ENOENT\)/,
      ));
    it('a directory', () => {
      const path = join(dir.path, 'a-directory');
      mkdirSync(path);
      return refusedAtStart(path, /not a regular file/);
    });
    it('a file over 1 MiB', () => {
      const path = dir.file('big.json', '');
      truncateSync(path, CALLERS_FILE_MAX_BYTES + 1);
      return refusedAtStart(path, /larger than 1048576 bytes/);
    });
  });
});
