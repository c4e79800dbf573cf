// runtime.listNotifications({ caller }) (src/runtime/tenant-notifications.ts; docs/api.md,
// "runtime.listNotifications"): only the rows of jobs in the caller's tenant, pages full even
// when the other tenants' rows far outnumber its own, and a malformed caller refused.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';
import { newSecret, startReceiver } from '../support/webhook-receiver.js';

const directory = mkdtempSync(join(tmpdir(), 'warrant-tenant-notify-'));
after(() => rmSync(directory, { recursive: true, force: true }));

describe('listNotifications with a caller', () => {
  it("lists only its tenant's rows, each page full past many rows of other tenants", async () => {
    const secret = newSecret();
    const receiver = await startReceiver(secret);
    // Down, and the first retry a minute away: every row stays pending.
    await receiver.down();
    const runtime = new OperatorRuntime({
      store: `sqlite:${join(directory, 'jobs.db')}`,
      notifications: [{ url: receiver.url, secret, events: ['job.completed'], allowPrivate: true }],
      notificationDelivery: { initialDelayMs: 60_000, pollMs: 20 },
    });
    try {
      const [cap] = register(runtime, { execute: () => 1 }) as [string];
      const run = async (caller: { id: string; tenant?: string }) =>
        (
          await runtime.executePlan(
            { version: '1.0', steps: [{ id: 'a', capability: cap, input: {} }] },
            { caller },
          )
        ).id;
      const acme: string[] = [];
      const untenanted: string[] = [];
      // 40 rows of another tenant before each of acme's: a page of 1 reads past them.
      for (let round = 0; round < 3; round++) {
        for (let other = 0; other < 40; other++) await run({ id: 'eve', tenant: 'globex' });
        acme.push(await run({ id: 'alice', tenant: 'acme' }));
        untenanted.push(await run({ id: 'alice' }));
      }
      assert.equal((await runtime.listNotifications({ limit: 1000 })).length, 126);

      const auditor = { id: 'auditor', tenant: 'acme', scopes: ['warrant:audit'] };
      const seen: string[] = [];
      let cursor = 0;
      for (;;) {
        const page = await runtime.listNotifications({ caller: auditor, limit: 1, after: cursor });
        if (page.length === 0) break;
        assert.equal(page.length, 1, 'a page is full while the tenant has rows left');
        seen.push(page[0]?.jobId ?? '');
        cursor = page[0]?.seq ?? 0;
      }
      assert.deepEqual(seen, acme);
      assert.deepEqual(
        (await runtime.listNotifications({ caller: { id: 'auditor' } })).map((row) => row.jobId),
        untenanted,
        'a caller without a tenant sees only jobs without one',
      );
      assert.deepEqual(await runtime.listNotifications({ caller: auditor, limit: 0 }), []);
      assert.deepEqual(
        await runtime.listNotifications({ caller: { id: 'x', tenant: 'initech' } }),
        [],
      );
      for (const caller of [{ id: 1 }, { id: 'x', tenant: 7 }, 'auditor'])
        await assert.rejects(
          runtime.listNotifications({ caller: caller as never }),
          (error: unknown) => (error as { code?: unknown }).code === 'JOB_FILTER_INVALID',
        );
    } finally {
      await runtime.close();
    }
  });
});
