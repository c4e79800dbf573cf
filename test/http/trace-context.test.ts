// Continuing a client's trace (docs/guide/telemetry.md, "Continuing a client's trace"): with the
// W3C propagator registered, a `traceparent` header on POST /api/plans, POST
// /api/capabilities/:name/execute and a tool call at /mcp makes the job's `warrant.job` span a
// child of the client's span (same trace id, the header's span as parent). Without the header the
// job span is a root, as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../../src/http/auth/index.js';
import { createHttpServer } from '../../src/http/server.js';
import type { OperatorRuntime } from '../../src/index.js';
import { register, runtimeWith } from '../support/runtime-fixtures.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;

const anyone: Authenticator = {
  authenticate: async () => ({ ok: true, caller: Object.freeze({ id: 'client' }) }),
};

let app: FastifyInstance;
let runtime: OperatorRuntime;
let base: string;
let name: string;
const clients: Client[] = [];

before(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  assert.ok(trace.setGlobalTracerProvider(provider));
  assert.ok(propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
  runtime = runtimeWith({
    store: 'memory',
    authorizer: { authorize: () => ({ decision: 'allow' }) },
  });
  [name] = register(runtime, { risk: 'read', execute: () => ({ ok: true }) }) as [string];
  app = createHttpServer(runtime, { authenticator: anyone });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
after(async () => {
  for (const client of clients) await client.close();
  await app.close();
  await runtime.close();
  trace.disable();
  context.disable();
  propagation.disable();
  await provider.shutdown();
});

/** The `warrant.job` span of the job, once ended. */
function jobSpan(jobId: string) {
  const span = exporter
    .getFinishedSpans()
    .find((ended) => ended.name === 'warrant.job' && ended.attributes['warrant.job.id'] === jobId);
  assert.ok(span !== undefined, `no warrant.job span for ${jobId}`);
  return span;
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return (await response.json()) as { id?: string; jobId?: string };
}

describe('an incoming traceparent is continued', () => {
  it('POST /api/plans: the job span is a child of the header span', async () => {
    const plan = { version: '1.0', steps: [{ id: 'a', capability: name }] };
    const job = await post('/api/plans', plan, { traceparent: TRACEPARENT });
    const span = jobSpan(job.id as string);
    assert.equal(span.spanContext().traceId, TRACE_ID);
    assert.equal(span.parentSpanContext?.spanId, PARENT_ID);

    const rooted = await post('/api/plans', plan);
    const root = jobSpan(rooted.id as string);
    assert.notEqual(root.spanContext().traceId, TRACE_ID);
    assert.equal(root.parentSpanContext, undefined);
  });

  it('POST /api/capabilities/:name/execute continues it too', async () => {
    const answer = await post(
      `/api/capabilities/${name}/execute`,
      { input: {} },
      {
        traceparent: TRACEPARENT,
      },
    );
    const span = jobSpan(answer.jobId as string);
    assert.equal(span.spanContext().traceId, TRACE_ID);
    assert.equal(span.parentSpanContext?.spanId, PARENT_ID);
  });

  it('a tool call at /mcp continues it', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: 'Bearer x', traceparent: TRACEPARENT } },
    });
    const client = new Client({ name: 'trace-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    exporter.reset();
    const result = await client.callTool({ name: name.replaceAll('.', '_'), arguments: {} });
    assert.notEqual(result.isError, true);
    const span = exporter.getFinishedSpans().find((ended) => ended.name === 'warrant.job');
    assert.ok(span !== undefined, 'no warrant.job span');
    assert.equal(span.spanContext().traceId, TRACE_ID);
    assert.equal(span.parentSpanContext?.spanId, PARENT_ID);
  });
});
