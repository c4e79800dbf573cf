// createHttpCapability (docs/api.md, "createHttpCapability"): through the runtime, the request
// goes to the addresses prepared before the decision even when the name resolves elsewhere
// afterwards, a redirect is the result and is not followed, an internal address is refused with
// the effect recorded as decided. Real servers on two loopback addresses.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  createHttpCapability,
  OperatorRuntime,
  type Capability,
  type HostResolver,
  type HttpCapabilityResponse,
  type Job,
} from '../../src/index.js';
import { digestJson } from '../../src/json/canonical-json.js';
import { testContext } from '../support/execution-context.js';
import { planOf, recordingAuthorizer, uniqueName } from '../support/runtime-fixtures.js';

interface Listening {
  readonly server: Server;
  readonly seen: string[];
}

function listen(address: string, port: number, answer: string): Promise<Listening> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(request.url ?? '');
    if (request.url === '/redirect') {
      response.statusCode = 302;
      const { port: own } = server.address() as AddressInfo;
      response.setHeader('location', `http://127.0.0.2:${own}/secret`);
      response.end('moved');
      return;
    }
    response.end(answer);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve({ server, seen }));
  });
}

/** A resolver whose answer the test changes; `asked` counts the lookups. */
function switchable(first: string) {
  const state = { answer: first, asked: 0 };
  const resolve: HostResolver = () => {
    state.asked += 1;
    return Promise.resolve([{ address: state.answer, family: 4 }]);
  };
  return { state, resolve };
}

function use(runtime: OperatorRuntime, capability: Capability): string {
  runtime.use({
    manifest: { name: uniqueName('http-module'), version: '1', capabilities: [capability.name] },
    capabilities: [capability],
  });
  return capability.name;
}

describe('createHttpCapability', () => {
  let a: Listening;
  let b: Listening;
  let port = 0;
  before(async () => {
    a = await listen('127.0.0.1', 0, 'from A');
    port = (a.server.address() as AddressInfo).port;
    b = await listen('127.0.0.2', port, 'from B');
  });
  after(() => {
    for (const { server } of [a, b]) {
      server.closeAllConnections();
      server.close();
    }
  });

  it('connects to the address prepared before the decision, though the name resolves elsewhere after it', async () => {
    const dns = switchable('127.0.0.1');
    // The answer changes while the authorizer decides: between prepare and perform.
    const authorizer = recordingAuthorizer(() => {
      dns.state.answer = '127.0.0.2';
      return { decision: 'allow' };
    });
    const runtime = new OperatorRuntime({ authorizer });
    try {
      const name = use(
        runtime,
        createHttpCapability<{ path: string }>({
          name: uniqueName('http.rebind'),
          version: '1',
          description: 'GETs a path of service.test',
          risk: 'read',
          allowPrivate: true,
          resolve: dns.resolve,
          request: (input) => ({ url: `http://service.test:${port}${input.path}` }),
        }),
      );
      const job = await runtime.executePlan(
        planOf({ id: 'get', capability: name, input: { path: '/x' } }),
      );
      assert.equal(job.status, 'completed', job.error);
      const result = job.result as HttpCapabilityResponse;
      assert.equal(result.body, 'from A');
      assert.equal(result.status, 200);
      assert.equal(dns.state.asked, 1, 'one resolution, in prepare');
      assert.deepEqual(b.seen, []);
      const effect = {
        method: 'GET',
        url: `http://service.test:${port}/x`,
        addresses: ['127.0.0.1'],
        headersDigest: digestJson({}),
      };
      assert.deepEqual(authorizer.calls[0]?.effect, effect);
      const stored = (await runtime.getJob(job.id)) as Job;
      assert.deepEqual(stored.steps[0]?.effect, effect);
      assert.equal(stored.steps[0]?.decision?.effectDigest, digestJson(effect));
    } finally {
      await runtime.close();
    }
  });

  it('returns a redirect as the result and does not follow it, to loopback or anywhere', async () => {
    const runtime = new OperatorRuntime();
    try {
      const name = use(
        runtime,
        createHttpCapability({
          name: uniqueName('http.redirect'),
          version: '1',
          description: 'GETs a redirect',
          risk: 'read',
          allowPrivate: true,
          request: () => ({ url: `http://127.0.0.1:${port}/redirect` }),
        }),
      );
      const job = await runtime.executePlan(planOf({ id: 'get', capability: name }));
      assert.equal(job.status, 'completed', job.error);
      const result = job.result as HttpCapabilityResponse;
      assert.equal(result.status, 302);
      assert.equal(result.headers.location, `http://127.0.0.2:${port}/secret`);
      assert.equal(result.body, 'moved');
      assert.deepEqual(b.seen, []);
    } finally {
      await runtime.close();
    }
  });

  it('refuses an internal address before the decision: denied, the effect recorded as decided, nothing sent', async () => {
    const authorizer = recordingAuthorizer();
    const runtime = new OperatorRuntime({ authorizer });
    try {
      const before = a.seen.length;
      const name = use(
        runtime,
        createHttpCapability<{ url: string }>({
          name: uniqueName('http.guarded'),
          version: '1',
          description: 'GETs a URL',
          risk: 'read',
          request: (input) => ({ url: input.url }),
        }),
      );
      const job = await runtime.executePlan(
        planOf({ id: 'get', capability: name, input: { url: `http://2130706433:${port}/` } }),
      );
      assert.equal(job.status, 'failed');
      assert.match(job.error ?? '', /^EFFECT_REFUSED: 127\.0\.0\.1 is a loopback address/);
      const effect = {
        method: 'GET',
        url: `http://127.0.0.1:${port}/`,
        addresses: ['127.0.0.1'],
        headersDigest: digestJson({}),
      };
      const stored = (await runtime.getJob(job.id)) as Job;
      const step = stored.steps[0];
      assert.equal(step?.decision?.outcome, 'deny');
      assert.equal(step?.decision?.reason, job.error);
      assert.equal(step?.decision?.authorizer, undefined);
      assert.deepEqual(step?.effect, effect);
      assert.equal(step?.decision?.effectDigest, digestJson(effect));
      const denied = stored.events.find((event) => event.type === 'capability.denied');
      assert.equal(denied?.data?.effectDigest, digestJson(effect));
      assert.equal(authorizer.calls.length, 0);
      assert.equal(a.seen.length, before);
      assert.deepEqual(await runtime.verifyJob(job.id), { ok: true, events: stored.events.length });
    } finally {
      await runtime.close();
    }
  });

  it('prepares by itself when called without the runtime, and refuses a request other than the one prepared', async () => {
    let calls = 0;
    const capability = createHttpCapability<{ url: string }>({
      name: uniqueName('http.direct'),
      version: '1',
      description: 'GETs a URL',
      risk: 'read',
      allowPrivate: true,
      request: (input) => ({ url: input.url, headers: { 'x-call': String(++calls) } }),
    });
    const result = (await capability.execute(
      { url: `http://127.0.0.1:${port}/direct` },
      testContext(),
    )) as HttpCapabilityResponse;
    assert.equal(result.body, 'from A');
    const prepared = await capability.prepare?.(
      { url: `http://127.0.0.1:${port}/` },
      { jobId: 'j', stepId: 's', caller: undefined, signal: new AbortController().signal },
    );
    await assert.rejects(
      Promise.resolve(
        capability.execute(
          { url: `http://127.0.0.1:${port}/` },
          testContext({ effect: structuredClone(prepared) }),
        ),
      ),
      /The request is not the one prepared/,
    );
    const strict = createHttpCapability<{ url: string }>({
      name: uniqueName('http.strict'),
      version: '1',
      description: 'GETs a URL',
      risk: 'read',
      request: (input) => ({ url: input.url }),
    });
    await assert.rejects(
      Promise.resolve(strict.execute({ url: `http://[::1]:${port}/` }, testContext())),
      (error: Error & { code?: string }) =>
        error.code === 'EFFECT_REFUSED' && /^::1 is a loopback address/.test(error.message),
    );
  });
});
