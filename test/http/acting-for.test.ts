// Acting for someone over HTTP (docs/api.md, "Callers: acting for someone", "JWT
// authentication"): a callers-file token with mayActFor sends Warrant-On-Behalf-Of and its jobs
// run for the subject, recorded with the chain; a forged header is 401 with nothing admitted; the
// subject approves what its agent proposed, the agent cannot; a JWT's tenant and act claims reach
// GET /api/caller and the record. Real servers on 127.0.0.1, real signed tokens.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { createHttpServer } from '../../src/http/server.js';
import { loadCallersFile, type Authenticator } from '../../src/http/auth/index.js';
import { createJwtAuthenticator } from '../../src/http/auth/jwt.js';
import { OperatorRuntime, type Job, type StepApprovalRequest } from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';
import { AUDIENCE, ISSUER, signToken, tempDir } from './auth/fixtures/helpers.js';

const dir = tempDir();
const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const close of closers) await close();
  dir.remove();
});

const sha = (token: string) => createHash('sha256').update(token).digest('hex');

async function start(authenticator: Authenticator) {
  const runtime = new OperatorRuntime({
    approvals: { approver: { canApprove: () => true } },
  });
  const [send] = register(runtime, { risk: 'write', execute: () => ({ sent: true }) }) as [string];
  const app = createHttpServer(runtime, { authenticator });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  closers.push(async () => (await app.close(), await runtime.close()));
  return { url, runtime, send };
}

async function call(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const response = await fetch(url + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

describe('callers file: mayActFor and Warrant-On-Behalf-Of', () => {
  const file = dir.file(
    'callers.json',
    JSON.stringify({
      callers: [
        {
          tokenSha256: sha('assistant-token'),
          caller: { id: 'assistant', scopes: ['mail:send'], tenant: 'acme' },
          mayActFor: ['ada'],
        },
        {
          tokenSha256: sha('ada-token'),
          caller: { id: 'ada', scopes: ['mail:send'], tenant: 'acme' },
        },
        { tokenSha256: sha('bob-token'), caller: { id: 'bob', scopes: [], tenant: 'acme' } },
      ],
    }),
  );
  const as = (token: string, onBehalfOf?: string) => ({
    authorization: `Bearer ${token}`,
    ...(onBehalfOf === undefined ? {} : { 'warrant-on-behalf-of': onBehalfOf }),
  });

  it("runs the agent's plan for the subject; the subject approves, the agent cannot", async () => {
    const { url, send } = await start((await loadCallersFile(file)).authenticator);
    const plan = { version: '1.0', steps: [{ id: 'mail', capability: send, input: { to: 'x' } }] };
    const who = await call(url, 'GET', '/api/caller', as('assistant-token', 'ada'));
    assert.deepEqual(who.body, {
      id: 'ada',
      tenant: 'acme',
      actor: 'assistant',
      scopes: 1,
      authenticated: true,
    });
    const submitted = await call(url, 'POST', '/api/plans', as('assistant-token', 'ada'), plan);
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    // The job stopped for approval is the answer (docs/guide/http.md, "HTTP routes").
    const job = submitted.body as Job;
    const jobId = job.id;
    assert.equal(job.status, 'awaiting_approval');
    assert.deepEqual(job.caller, {
      id: 'ada',
      scopes: ['mail:send'],
      tenant: 'acme',
      actor: { id: 'assistant', scopes: ['mail:send'], tenant: 'acme' },
    });
    // The agent alone reads the job it acted in, and the subject sees the request.
    assert.equal((await call(url, 'GET', `/api/jobs/${jobId}`, as('assistant-token'))).status, 200);
    const listed = await call(url, 'GET', '/api/approvals', as('ada-token'));
    const [request] = listed.body as StepApprovalRequest[];
    assert.equal(request?.jobId, jobId);
    const decide = (headers: Record<string, string>) =>
      call(url, 'POST', `/api/jobs/${jobId}/steps/mail/approval`, headers, {
        decision: 'approve',
        inputDigest: request?.inputDigest,
      });
    const byAgent = await decide(as('assistant-token'));
    assert.equal(byAgent.status, 403);
    assert.match((byAgent.body as { error: string }).error, /"assistant" acted in job/);
    const bySubject = await decide(as('ada-token'));
    assert.equal(bySubject.status, 200, JSON.stringify(bySubject.body));
    assert.equal((bySubject.body as { status: string }).status, 'completed');
  });

  it('answers 401 and admits nothing for a forged header: a token without mayActFor, an id not listed', async () => {
    const { url, runtime, send } = await start((await loadCallersFile(file)).authenticator);
    const plan = { version: '1.0', steps: [{ id: 'mail', capability: send, input: {} }] };
    for (const headers of [
      as('bob-token', 'ada'),
      as('ada-token', 'bob'),
      as('assistant-token', 'bob'),
      as('assistant-token', 'nobody'),
    ]) {
      const answer = await call(url, 'POST', '/api/plans', headers, plan);
      assert.equal(answer.status, 401, JSON.stringify(headers));
      assert.equal((await call(url, 'GET', '/api/caller', headers)).status, 401);
    }
    assert.deepEqual(await runtime.listJobs(), []);
  });
});

describe('JWT: tenant, scopes and the act claim', () => {
  const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
  const key = new TextEncoder().encode(SECRET);

  it('answers the tenant and the actor on GET /api/caller and records the chain', async () => {
    const authenticator = await createJwtAuthenticator({
      secret: SECRET,
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    const { url, runtime, send } = await start(authenticator);
    const token = await signToken({
      alg: 'HS256',
      key,
      claims: {
        sub: 'ada',
        tenant: 'acme',
        scope: 'mail:send',
        act: { sub: 'assistant', scope: 'mail:send' },
      },
    });
    const bearer = { authorization: `Bearer ${token}` };
    const who = await call(url, 'GET', '/api/caller', bearer);
    assert.deepEqual(who.body, {
      id: 'ada',
      tenant: 'acme',
      actor: 'assistant',
      scopes: 1,
      authenticated: true,
    });
    const plan = { version: '1.0', steps: [{ id: 'mail', capability: send, input: {} }] };
    const submitted = await call(url, 'POST', '/api/plans', bearer, plan);
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    const job = submitted.body as Job;
    assert.equal(job.caller?.tenant, 'acme');
    assert.deepEqual(job.caller?.actor, { id: 'assistant', scopes: ['mail:send'] });
    // The JWT mode never reads the header: a token with it is 401.
    const forged = await call(url, 'GET', '/api/caller', {
      ...bearer,
      'warrant-on-behalf-of': 'bob',
    });
    assert.equal(forged.status, 401);
    const hostile = await signToken({
      alg: 'HS256',
      key,
      claims: { sub: 'ada', act: { sub: 'bot', act: { sub: 'ada' } } },
    });
    const cycle = await call(
      url,
      'POST',
      '/api/plans',
      { authorization: `Bearer ${hostile}` },
      plan,
    );
    assert.equal(cycle.status, 401);
    assert.equal((await runtime.listJobs()).length, 1, 'nothing more admitted');
  });
});
