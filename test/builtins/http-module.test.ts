import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { allowsUrl, createHttpModule, parseAllowEntry } from '../../src/builtins/http-module.js';
import { createProgramRuntime } from '../../src/cli/program-runtime.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { OperatorRuntime, type Capability, type HostResolver, type Job } from '../../src/index.js';
import { digestJson } from '../../src/json/canonical-json.js';
import { testContext } from '../support/execution-context.js';

const context = testContext();

describe('builtin http module', () => {
  let server: Server;
  let port = 0;
  before(async () => {
    server = createServer((request, response) => {
      // Never answers on its own: the capability's time-out must end the request, however busy
      // the machine is (a 500 ms answer raced a 50 ms time-out under load).
      if (request.url === '/slow') return;
      response.setHeader('content-type', 'text/plain');
      response.end(`hello ${decodeURIComponent(request.url ?? '')}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  // The test servers listen on loopback: reaching them needs allowPrivate (docs/api.md,
  // "Prepared effects"); the refusals without it are tested below.
  const capability = (options: Parameters<typeof createHttpModule>[0], name = 'http.get') =>
    createHttpModule({ allowPrivate: true, ...options }).capabilities.find(
      (entry) => entry.name === name,
    ) as Capability;

  it('GETs an allow-listed loopback URL', async () => {
    const get = capability({ allowHosts: [`127.0.0.1:${port}`] });
    const result = (await get.execute({ url: `http://127.0.0.1:${port}/x` }, context)) as Record<
      string,
      unknown
    >;
    assert.equal(result.status, 200);
    assert.equal(result.body, 'hello /x');
    assert.equal(result.truncated, false);
    assert.equal(result.contentType, 'text/plain');
  });

  it('lets a host-only entry reach ports 80 and 443 only, and host:port exactly that port', async () => {
    for (const allowHosts of [['127.0.0.1'], [`127.0.0.1:${port + 1}`], ['localhost:' + port]]) {
      await assert.rejects(
        Promise.resolve(
          capability({ allowHosts }).execute({ url: `http://127.0.0.1:${port}/` }, context),
        ),
        /not in the allow-list/,
        allowHosts[0],
      );
    }
    const allows = (entry: string, url: string) =>
      allowsUrl([parseAllowEntry(entry)], new URL(url));
    const cases: [string, string, boolean][] = [
      ['example.com', 'http://example.com/', true],
      ['example.com', 'https://example.com/', true],
      ['example.com', 'http://example.com:443/', true],
      ['example.com', 'https://example.com:80/', true],
      ['example.com', 'http://example.com:8080/', false],
      ['example.com', 'http://www.example.com/', false],
      ['Example.COM', 'http://EXAMPLE.com/', true],
      ['example.com:8080', 'http://example.com:8080/', true],
      ['example.com:8080', 'https://example.com:8080/', true],
      ['example.com:8080', 'http://example.com/', false],
      ['example.com:8080', 'http://example.com:8081/', false],
      ['example.com:80', 'http://example.com/', true],
      ['example.com:80', 'https://example.com/', false],
      ['example.com:443', 'https://example.com/', true],
      ['[::1]', 'http://[::1]/', true],
      ['[::1]', 'http://[::1]:8080/', false],
      ['[::1]:8080', 'http://[::1]:8080/', true],
      ['[::1]:8080', 'http://[::1]:8081/', false],
      ['[::1]:8080', 'http://[::1]/', false],
      ['[0:0:0:0:0:0:0:1]:8080', 'http://[::1]:8080/', true],
      ['127.0.0.1:8080', 'http://127.0.0.1:8080/', true],
      ['127.0.0.1:8080', 'http://127.1:8080/', true],
      ['127.0.0.1:8080', 'http://localhost:8080/', false],
    ];
    for (const [entry, url, expected] of cases)
      assert.equal(allows(entry, url), expected, `${entry} ${url}`);
  });

  it('refuses malformed allow-list entries, in the module and on the command line', async () => {
    for (const entry of [
      '::1',
      '[::1',
      'host:0',
      'host:65536',
      'host:http',
      'http://host',
      'host/path',
      'user@host',
      'host:',
      ':80',
      'a b',
      '*.example.com',
    ]) {
      assert.throws(
        () => createHttpModule({ allowHosts: [entry] }),
        /is not a host or host:port/,
        entry,
      );
    }
    await assert.rejects(
      createProgramRuntime({ store: 'memory', 'http-allow': 'example.com, host:99999' }),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message ===
          '--http-allow: "host:99999" is not a host or host:port (IPv6 in brackets: [::1]:8080)',
    );
  });

  it('refuses hosts outside the allow-list (an empty list refuses all), other schemes and bad URLs', async () => {
    await assert.rejects(
      Promise.resolve(
        capability({ allowHosts: [] }).execute({ url: `http://127.0.0.1:${port}/` }, context),
      ),
      /not in the allow-list/,
    );
    const get = capability({ allowHosts: ['127.0.0.1'] });
    await assert.rejects(
      Promise.resolve(get.execute({ url: 'http://localhost.invalid/' }, context)),
      /not in the allow-list/,
    );
    await assert.rejects(
      Promise.resolve(get.execute({ url: 'file:///etc/passwd' }, context)),
      /Only http and https/,
    );
    await assert.rejects(
      Promise.resolve(get.execute({ url: 'not a url' }, context)),
      /Not a valid URL/,
    );
  });

  it('gives up after its timeout', async () => {
    const get = capability({ allowHosts: [`127.0.0.1:${port}`], timeoutMs: 50 });
    await assert.rejects(
      Promise.resolve(get.execute({ url: `http://127.0.0.1:${port}/slow` }, context)),
      /aborted|timeout/i,
    );
  });

  it('caps the body it returns in bytes, never cutting a character in two', async () => {
    const get = (maxBytes: number, path: string) =>
      capability({ allowHosts: [`127.0.0.1:${port}`], maxBytes }).execute(
        { url: `http://127.0.0.1:${port}${path}` },
        context,
      ) as Promise<{ body: string; truncated: boolean }>;
    assert.deepEqual(await get(4, '/abc').then((r) => [r.body, r.truncated]), ['hell', true]);
    // 'hello /é' is 9 bytes: a cap of exactly 9 is not a truncation, 8 drops the half character.
    assert.deepEqual(await get(9, '/é').then((r) => [r.body, r.truncated]), ['hello /é', false]);
    assert.deepEqual(await get(8, '/é').then((r) => [r.body, r.truncated]), ['hello /', true]);
  });

  it('stops reading at the cap: a 128 MiB body is cut off, not read to its end', async () => {
    const total = 128 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let written = 0;
    let finished = false;
    let closed!: () => void;
    const responseClosed = new Promise<void>((resolve) => (closed = resolve));
    const big = createServer((_request, response) => {
      response.on('close', () => {
        finished = response.writableFinished;
        closed();
      });
      // Generated as it is read, with back-pressure: `written` is what the client let through.
      const pump = () => {
        while (written < total && !response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        if (written >= total) response.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', resolve));
    const bigPort = (big.address() as AddressInfo).port;
    try {
      const get = capability({ allowHosts: [`127.0.0.1:${bigPort}`], maxBytes: 1024 * 1024 });
      const result = (await get.execute({ url: `http://127.0.0.1:${bigPort}/` }, context)) as {
        body: string;
        truncated: boolean;
      };
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        responseClosed,
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error('the server never saw the response close')),
            20_000,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      assert.equal(finished, false, 'the connection closed before the body was sent');
      assert.ok(written < total / 2, `the server wrote ${written} of ${total} bytes`);
      assert.equal(result.body.length, 1024 * 1024);
      assert.equal(result.truncated, true);
    } finally {
      big.closeAllConnections();
      await new Promise((resolve) => big.close(resolve));
    }
  });

  it('reports its status', async () => {
    assert.deepEqual(
      await capability(
        { allowHosts: ['Example.com', '[0::1]:8080', '127.0.0.1:3000'] },
        'http.status',
      ).execute({}, context),
      {
        provider: 'http',
        ready: true,
        allowHosts: ['example.com', '[::1]:8080', '127.0.0.1:3000'],
      },
    );
  });
});

// docs/api.md, "Prepared effects": http.get resolves in prepare and refuses internal addresses
// unless --http-allow-private, whatever the spelling; the refusal is a denial with the effect.
describe('http.get refuses internal addresses before the decision', () => {
  let server: Server;
  let port = 0;
  let requests = 0;
  const runtime = new OperatorRuntime();
  const answers: Record<string, string[]> = {
    'internal.test': ['10.0.0.5'],
    'mixed.test': ['93.184.216.34', '10.0.0.5'],
    'six.test': ['::ffff:192.168.0.1'],
    'metadata.test': ['fd00:ec2::254'],
  };
  const resolve: HostResolver = (hostname) =>
    Promise.resolve(
      (answers[hostname] ?? []).map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      })),
    );
  before(async () => {
    server = createServer((_request, response) => {
      requests += 1;
      response.end('reached');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    runtime.use(
      createHttpModule({
        allowHosts: [
          `127.0.0.1:${port}`,
          `[::1]:${port}`,
          `[::ffff:127.0.0.1]:${port}`,
          `[::127.0.0.1]:${port}`,
          '169.254.169.254',
          '[fd00:ec2::254]',
          '[fe80::1]',
          '[fc00::1]',
          '10.1.2.3',
          '172.16.5.4',
          '192.168.1.1',
          '100.64.0.1',
          '0.0.0.0',
          '[::]',
          'internal.test',
          'mixed.test',
          'six.test',
          'metadata.test',
        ],
        resolve,
      }),
    );
  });
  after(async () => {
    await runtime.close();
    server.closeAllConnections();
    server.close();
  });

  it('denies each spelling of an internal address, recording the effect it refused', async () => {
    const cases: [string, string, string[], RegExp][] = [
      [`http://127.0.0.1:${port}/`, `http://127.0.0.1:${port}/`, ['127.0.0.1'], /loopback/],
      // Decimal, octal and hex spellings of 127.0.0.1, as WHATWG URL reads them.
      [`http://2130706433:${port}/`, `http://127.0.0.1:${port}/`, ['127.0.0.1'], /loopback/],
      [`http://0177.0.0.1:${port}/`, `http://127.0.0.1:${port}/`, ['127.0.0.1'], /loopback/],
      [`http://0x7f.0.0.1:${port}/`, `http://127.0.0.1:${port}/`, ['127.0.0.1'], /loopback/],
      [`http://0x7f000001:${port}/`, `http://127.0.0.1:${port}/`, ['127.0.0.1'], /loopback/],
      [`http://[::1]:${port}/`, `http://[::1]:${port}/`, ['::1'], /loopback/],
      // IPv4-mapped and IPv4-compatible IPv6 forms.
      [
        `http://[::ffff:127.0.0.1]:${port}/`,
        `http://[::ffff:7f00:1]:${port}/`,
        ['::ffff:7f00:1'],
        /loopback/,
      ],
      [`http://[::127.0.0.1]:${port}/`, `http://[::7f00:1]:${port}/`, ['::7f00:1'], /loopback/],
      [
        'http://169.254.169.254/latest',
        'http://169.254.169.254/latest',
        ['169.254.169.254'],
        /metadata/,
      ],
      ['http://[fd00:ec2::254]/', 'http://[fd00:ec2::254]/', ['fd00:ec2::254'], /metadata/],
      ['http://[fe80::1]/', 'http://[fe80::1]/', ['fe80::1'], /link-local/],
      ['http://[fc00::1]/', 'http://[fc00::1]/', ['fc00::1'], /unique-local/],
      ['http://10.1.2.3/', 'http://10.1.2.3/', ['10.1.2.3'], /private/],
      ['http://172.16.5.4/', 'http://172.16.5.4/', ['172.16.5.4'], /private/],
      ['http://192.168.1.1/', 'http://192.168.1.1/', ['192.168.1.1'], /private/],
      ['http://100.64.0.1/', 'http://100.64.0.1/', ['100.64.0.1'], /CGNAT/],
      ['http://0.0.0.0/', 'http://0.0.0.0/', ['0.0.0.0'], /this-network/],
      ['http://[::]/', 'http://[::]/', ['::'], /unspecified/],
      // Names: resolved in prepare, every address checked.
      ['http://internal.test/', 'http://internal.test/', ['10.0.0.5'], /resolved to 10\.0\.0\.5/],
      [
        'http://mixed.test/',
        'http://mixed.test/',
        ['10.0.0.5', '93.184.216.34'],
        /resolved to 10\.0\.0\.5/,
      ],
      ['http://six.test/', 'http://six.test/', ['::ffff:192.168.0.1'], /private/],
      ['http://metadata.test/', 'http://metadata.test/', ['fd00:ec2::254'], /metadata/],
    ];
    for (const [url, normalized, addresses, reason] of cases) {
      const job = await runtime.executePlan({
        version: '1.0',
        steps: [{ id: 'get', capability: 'http.get', input: { url } }],
      });
      assert.equal(job.status, 'failed', url);
      assert.match(job.error ?? '', /^EFFECT_REFUSED: /, url);
      assert.match(job.error ?? '', reason, url);
      const effect = {
        method: 'GET',
        url: normalized,
        addresses,
        headersDigest: digestJson({ accept: '*/*' }),
      };
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.equal(stored.steps[0]?.decision?.outcome, 'deny', url);
      assert.deepEqual(stored.steps[0]?.effect, effect, url);
      assert.equal(stored.steps[0]?.decision?.effectDigest, digestJson(effect), url);
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: job.events.length });
    }
    assert.equal(requests, 0, 'no request reached the loopback server');
  });

  it('refuses them when called directly too, and reaches them with allowPrivate', async () => {
    const get = (allowPrivate: boolean) =>
      createHttpModule({ allowHosts: [`127.0.0.1:${port}`], allowPrivate }).capabilities.find(
        (entry) => entry.name === 'http.get',
      ) as Capability;
    await assert.rejects(
      Promise.resolve(get(false).execute({ url: `http://2130706433:${port}/` }, context)),
      (error: Error & { code?: string }) => error.code === 'EFFECT_REFUSED',
    );
    assert.equal(requests, 0);
    const reached = (await get(true).execute({ url: `http://0177.0.0.1:${port}/` }, context)) as {
      body: string;
      url: string;
    };
    assert.deepEqual([reached.body, reached.url], ['reached', `http://127.0.0.1:${port}/`]);
  });
});
