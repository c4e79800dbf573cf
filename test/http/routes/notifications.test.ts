// GET /api/notifications (src/http/routes/notifications.ts; docs/api.md, "HTTP: notifications"):
// for an auditor only (403 without an authentication mode or without the scope), of its own
// tenant only, paged with a cursor, and never a URL, a secret or a body.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadCallersFile } from '../../../src/http/auth/index.js';
import { createHttpServer } from '../../../src/http/server.js';
import { OperatorRuntime, type ExecutionCaller } from '../../../src/index.js';
import { register } from '../../support/runtime-fixtures.js';
import { waitFor } from '../../support/wait.js';
import { newSecret, startReceiver } from '../../support/webhook-receiver.js';

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

const secret = newSecret();

/** A runtime whose receiver is down, with three jobs' notifications failed or pending. */
async function start(identified: boolean) {
  const receiver = await startReceiver(secret);
  receiver.status = 500;
  const hookUrl = `${receiver.url}hook-path-SECRET?token=SECRET`;
  const runtime = new OperatorRuntime({
    notifications: [{ url: hookUrl, secret, events: ['job.completed'], allowPrivate: true }],
    notificationDelivery: { attempts: 1, pollMs: 20, initialDelayMs: 20, timeoutMs: 1_000 },
  });
  const [cap] = register(runtime, { execute: () => ({ password: 'result-SECRET' }) }) as [string];
  for (let index = 0; index < 3; index++)
    await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'a', capability: cap, input: { password: 'input-SECRET' } }],
    });
  const app = createHttpServer(
    runtime,
    identified
      ? {
          // The caller and its scopes are named by test headers: the modes are tested elsewhere.
          resolveCaller: (request) => ({
            id: String(request.headers['x-test-caller']),
            scopes: String(request.headers['x-test-scopes'] ?? '')
              .split(' ')
              .filter(Boolean),
          }),
        }
      : {},
  );
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  closers.push(async () => (await app.close(), await runtime.close()));
  return { url, runtime };
}

async function get(url: string, path: string, scopes = 'warrant:audit') {
  const response = await fetch(url + path, {
    headers: { 'x-test-caller': 'ops', 'x-test-scopes': scopes },
    signal: AbortSignal.timeout(20_000),
  });
  return {
    status: response.status,
    cursor: response.headers.get('warrant-next-cursor'),
    text: await response.text(),
  };
}

describe('GET /api/notifications', () => {
  it('is 403 without an authentication mode, and for a caller without warrant:audit', async () => {
    const plain = await start(false);
    const refused = await get(plain.url, '/api/notifications');
    assert.equal(refused.status, 403);
    assert.match(refused.text, /warrant:audit/);
    const server = await start(true);
    assert.equal((await get(server.url, '/api/notifications', 'jobs:read')).status, 403);
    assert.equal((await get(server.url, '/api/notifications')).status, 200);
  });

  it('pages the rows with a cursor; shows the destination label, never the URL, secret or body', async () => {
    const server = await start(true);
    // Every row fails at its one attempt (the deliverer's, in the outbox).
    await waitFor(
      async () =>
        (await server.runtime.listNotifications()).every((row) => row.status === 'failed'),
      { what: 'every row to fail its one attempt' },
    );
    const first = await get(server.url, '/api/notifications?limit=2');
    assert.equal(first.status, 200);
    const page = JSON.parse(first.text) as Record<string, unknown>[];
    assert.equal(page.length, 2);
    assert.ok(first.cursor, 'a full page names the next');
    const second = await get(server.url, `/api/notifications?limit=2&cursor=${first.cursor}`);
    const rest = JSON.parse(second.text) as Record<string, unknown>[];
    assert.equal(rest.length, 1);
    assert.equal(second.cursor, null, 'the last page names none');
    for (const row of [...page, ...rest]) {
      assert.deepEqual(Object.keys(row), [
        'seq',
        'id',
        'type',
        'jobId',
        'at',
        'destination',
        'status',
        'attempts',
        'nextAt',
        'error',
      ]);
      assert.equal(row.status, 'failed');
      assert.equal(row.type, 'job.completed');
      assert.match(String(row.error), /^attempt 1: HTTP 500$/);
      assert.match(String(row.destination), /^http:\/\/127\.0\.0\.1:\d+#[0-9a-f]{16}$/);
    }
    for (const text of [first.text, second.text]) {
      assert.doesNotMatch(text, /SECRET|hook-path|whsec_/);
      assert.ok(!text.includes(secret.slice(6)));
    }
    assert.equal((await get(server.url, '/api/notifications?limit=0')).status, 400);
    assert.equal((await get(server.url, '/api/notifications?cursor=x')).status, 400);
  });

  it("shows an auditor only its tenant's rows (no tenant: only jobs without one), page by page", async () => {
    const directory = mkdtempSync(join(tmpdir(), 'warrant-notify-tenants-'));
    closers.push(async () => rmSync(directory, { recursive: true, force: true }));
    const sha = (token: string) => createHash('sha256').update(token).digest('hex');
    const audit = ['warrant:audit'];
    const auditors: Record<string, ExecutionCaller> = {
      acme: { id: 'auditor', tenant: 'acme', scopes: audit },
      globex: { id: 'auditor', tenant: 'globex', scopes: audit },
      none: { id: 'auditor', scopes: audit },
    };
    const callersPath = join(directory, 'callers.json');
    writeFileSync(
      callersPath,
      JSON.stringify({
        callers: Object.entries(auditors).map(([name, caller]) => ({
          tokenSha256: sha(`${name}-token`),
          caller,
        })),
      }),
      { mode: 0o600 },
    );
    const { authenticator } = await loadCallersFile(callersPath);
    const receiver = await startReceiver(secret);
    receiver.status = 500;
    const runtime = new OperatorRuntime({
      notifications: [{ url: receiver.url, secret, events: ['job.completed'], allowPrivate: true }],
      notificationDelivery: { attempts: 1, pollMs: 20, initialDelayMs: 20, timeoutMs: 1_000 },
    });
    const app = createHttpServer(runtime, { authenticator });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(async () => (await app.close(), await runtime.close()));
    const [cap] = register(runtime, { execute: () => 1 }) as [string];
    // Jobs of the three tenants, interleaved, so a page of one tenant skips the others' rows.
    const jobsOf: Record<string, string[]> = { acme: [], globex: [], none: [] };
    for (let round = 0; round < 3; round++)
      for (const [name, submitter] of [
        ['acme', { id: 'alice', tenant: 'acme' }],
        ['globex', { id: 'alice', tenant: 'globex' }],
        ['none', { id: 'alice' }],
      ] as const) {
        const job = await runtime.executePlan(
          { version: '1.0', steps: [{ id: 'a', capability: cap, input: {} }] },
          { caller: submitter },
        );
        jobsOf[name]?.push(job.id);
      }
    assert.equal((await runtime.listNotifications()).length, 9, 'the library lists every row');

    const pageAs = async (name: string, query: string) => {
      const response = await fetch(`${url}/api/notifications${query}`, {
        headers: { authorization: `Bearer ${name}-token` },
        signal: AbortSignal.timeout(20_000),
      });
      assert.equal(response.status, 200);
      const rows = (await response.json()) as { jobId: string }[];
      return {
        jobs: rows.map((row) => row.jobId),
        cursor: response.headers.get('warrant-next-cursor'),
      };
    };
    for (const name of Object.keys(auditors)) {
      assert.deepEqual((await pageAs(name, '')).jobs, jobsOf[name], `${name} sees its own`);
      // Two rows a page: the cursor walks past the other tenants' rows.
      const first = await pageAs(name, '?limit=2');
      assert.deepEqual(first.jobs, jobsOf[name]?.slice(0, 2));
      assert.ok(first.cursor);
      const second = await pageAs(name, `?limit=2&cursor=${first.cursor}`);
      assert.deepEqual(second.jobs, jobsOf[name]?.slice(2));
      assert.equal(second.cursor, null);
      assert.deepEqual(
        (await runtime.listNotifications({ caller: auditors[name] })).map((row) => row.jobId),
        jobsOf[name],
      );
    }
  });
});
