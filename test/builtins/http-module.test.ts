import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createHttpModule } from '../../src/builtins/http-module.js';
import type { Capability } from '../../src/index.js';
import { testContext } from '../support/execution-context.js';

const context = testContext();

describe('builtin http module', () => {
  let server: Server;
  let port = 0;
  before(async () => {
    server = createServer((request, response) => {
      if (request.url === '/slow') return void setTimeout(() => response.end('late'), 500);
      response.setHeader('content-type', 'text/plain');
      response.end(`hello ${request.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  const capability = (options: Parameters<typeof createHttpModule>[0], name = 'http.get') =>
    createHttpModule(options).capabilities.find((entry) => entry.name === name) as Capability;

  it('GETs an allow-listed loopback URL', async () => {
    const get = capability({ allowHosts: ['127.0.0.1'] });
    const result = (await get.execute({ url: `http://127.0.0.1:${port}/x` }, context)) as Record<
      string,
      unknown
    >;
    assert.equal(result.status, 200);
    assert.equal(result.body, 'hello /x');
    assert.equal(result.contentType, 'text/plain');
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
    const get = capability({ allowHosts: ['127.0.0.1'], timeoutMs: 50 });
    await assert.rejects(
      Promise.resolve(get.execute({ url: `http://127.0.0.1:${port}/slow` }, context)),
      /aborted|timeout/i,
    );
  });

  it('caps the body it returns', async () => {
    const get = capability({ allowHosts: [`127.0.0.1:${port}`], maxBytes: 4 });
    assert.equal(
      ((await get.execute({ url: `http://127.0.0.1:${port}/abc` }, context)) as { body: string })
        .body,
      'hell',
    );
  });

  it('reports its status', async () => {
    assert.deepEqual(
      await capability({ allowHosts: ['Example.com'] }, 'http.status').execute({}, context),
      {
        provider: 'http',
        ready: true,
        allowHosts: ['example.com'],
      },
    );
  });
});
