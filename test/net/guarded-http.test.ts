// Outbound HTTP bound to what was prepared (docs/api.md, "Prepared effects"): URL normalization,
// one resolution, the address rule with the effect on its refusal, a lookup that answers the
// prepared addresses only, and a request that goes to them (real sockets on loopback).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { isIssuedError } from '../../src/errors/warrant-error.js';
import { digestJson } from '../../src/json/canonical-json.js';
import {
  checkPrepared,
  normalizeUrl,
  pinnedLookup,
  prepareHttp,
  resolveHost,
  sendPinned,
  type HostResolver,
} from '../../src/net/guarded-http.js';

/** A resolver the test controls: the answers it gives, and every name it was asked. */
function resolver(answers: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve: HostResolver = (hostname) => {
    asked.push(hostname);
    return Promise.resolve(
      (answers[hostname] ?? []).map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      })),
    );
  };
  return { asked, resolve };
}

describe('guarded outbound HTTP', () => {
  let server: Server;
  let port = 0;
  const paths: string[] = [];
  before(async () => {
    server = createServer((request, response) => {
      paths.push(request.url ?? '');
      response.end(`host ${request.headers.host}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('normalizes URLs as WHATWG does, and refuses other schemes and credentials', () => {
    assert.equal(normalizeUrl('http://2130706433/a#frag').href, 'http://127.0.0.1/a');
    assert.equal(normalizeUrl('http://0177.0.0.1/').href, 'http://127.0.0.1/');
    assert.equal(normalizeUrl('http://0x7f.1/').href, 'http://127.0.0.1/');
    assert.equal(normalizeUrl('HTTP://Example.COM:80/x').href, 'http://example.com/x');
    assert.throws(() => normalizeUrl('file:///etc/passwd'), /Only http and https/);
    assert.throws(() => normalizeUrl('http://user:pw@example.com/'), /credentials/);
    assert.throws(() => normalizeUrl('nope'), /Not a valid URL/);
  });

  it('resolves a name once, sorted and without duplicates; an IP literal is its own address', async () => {
    const { asked, resolve } = resolver({ 'b.test': ['10.0.0.2', '10.0.0.1', '10.0.0.2'] });
    assert.deepEqual(await resolveHost(new URL('http://b.test/'), { resolve }), [
      '10.0.0.1',
      '10.0.0.2',
    ]);
    assert.deepEqual(await resolveHost(new URL('http://[::1]:8080/'), { resolve }), ['::1']);
    assert.deepEqual(asked, ['b.test']);
    await assert.rejects(resolveHost(new URL('http://none.test/'), { resolve }), /no address/);
  });

  it('refuses an internal address with EFFECT_REFUSED, carrying the effect it refused', async () => {
    const { resolve } = resolver({ 'inside.test': ['93.184.216.34', '10.0.0.5'] });
    const refused = await prepareHttp({ url: 'http://inside.test/x' }, { resolve }).then(
      () => assert.fail('expected a refusal'),
      (error: unknown) => error as Error & { effect?: unknown },
    );
    assert.ok(isIssuedError(refused, 'EFFECT_REFUSED'));
    assert.equal(
      refused.message,
      'inside.test resolved to 10.0.0.5, which is a private address; internal addresses are refused unless allowed (allowPrivate, --http-allow-private)',
    );
    assert.deepEqual(refused.effect, {
      method: 'GET',
      url: 'http://inside.test/x',
      addresses: ['10.0.0.5', '93.184.216.34'],
      headersDigest: digestJson({}),
    });
    const literal = await prepareHttp({ url: 'http://[::ffff:7f00:1]/' }, {}).catch(
      (error: Error) => error,
    );
    assert.match(
      (literal as Error).message,
      /^::ffff:7f00:1 is a loopback address; internal addresses are refused/,
    );
    // Allowed: the same effect, prepared.
    assert.deepEqual(
      await prepareHttp(
        { url: 'http://inside.test/x', method: 'post', headers: { 'X-A': '1' }, body: 'hi' },
        { resolve, allowPrivate: true },
      ),
      {
        method: 'POST',
        url: 'http://inside.test/x',
        addresses: ['10.0.0.5', '93.184.216.34'],
        headersDigest: digestJson({ 'x-a': '1' }),
        bodyDigest: digestJson('hi'),
      },
    );
  });

  it('answers only the prepared addresses, of the family asked', () => {
    const lookup = pinnedLookup(['127.0.0.1', '::1']) as unknown as (
      host: string,
      options: object,
      callback: (error: Error | null, address: unknown, family?: number) => void,
    ) => void;
    const answers: unknown[] = [];
    lookup('evil.test', { all: true }, (_error, address) => answers.push(address));
    lookup('evil.test', { family: 6 }, (_error, address, family) =>
      answers.push([address, family]),
    );
    lookup('evil.test', { family: 4, all: true }, (_error, address) => answers.push(address));
    assert.deepEqual(answers, [
      [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ],
      ['::1', 6],
      [{ address: '127.0.0.1', family: 4 }],
    ]);
  });

  it('connects to the prepared address whatever the name would resolve to now', async () => {
    // `rebind.invalid` resolves nowhere: the request reaches the server through the prepared
    // address only, with the name in its Host header.
    const response = await sendPinned(new URL(`http://rebind.invalid:${port}/p`), ['127.0.0.1'], {
      method: 'GET',
      headers: {},
    });
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    assert.equal(Buffer.concat(chunks).toString(), `host rebind.invalid:${port}`);
    assert.ok(paths.includes('/p'));
  });

  it('sends a request only when it is the one prepared, to addresses the rule allows', () => {
    const effect = {
      method: 'GET',
      url: 'http://a.test/',
      addresses: ['93.184.216.34'],
      headersDigest: digestJson({}),
    };
    assert.deepEqual(checkPrepared({ url: 'http://A.test/#x' }, effect, {}), effect);
    assert.throws(
      () => checkPrepared({ url: 'http://b.test/' }, effect, {}),
      /not the one prepared/,
    );
    assert.throws(
      () => checkPrepared({ url: 'http://a.test/', headers: { a: '1' } }, effect, {}),
      /not the one prepared/,
    );
    assert.throws(
      () => checkPrepared({ url: 'http://a.test/' }, { ...effect, addresses: [] }, {}),
      /no addresses/,
    );
    assert.throws(
      () => checkPrepared({ url: 'http://a.test/' }, { ...effect, addresses: ['10.0.0.1'] }, {}),
      (error: Error) => isIssuedError(error, 'EFFECT_REFUSED'),
    );
  });
});
