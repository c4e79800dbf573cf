// The approvals option and the approver policy: only `true` (or a promise of `true`) in time is yes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  askApprover,
  checkApprovalsOption,
  DEFAULT_APPROVAL_TTL_MS,
  type ApproverPolicy,
} from '../../src/approvals/approver-policy.js';
import type { ApprovalRequest } from '../../src/approvals/approval-request.js';

const request = Object.freeze({
  jobId: 'j',
  stepId: 's',
  capability: 'c',
  capabilityVersion: '1.0.0',
  risk: 'write',
  input: {},
  inputDigest: 'sha256:00',
  requestedAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-02T00:00:00.000Z',
}) as ApprovalRequest;

describe('checkApprovalsOption', () => {
  it('is undefined without the option, and defaults ttlMs to 24 hours', () => {
    assert.equal(checkApprovalsOption(undefined), undefined);
    const approver = { canApprove: () => true };
    assert.deepEqual(checkApprovalsOption({ approver }), {
      approver,
      ttlMs: DEFAULT_APPROVAL_TTL_MS,
    });
    assert.equal(checkApprovalsOption({ approver, ttlMs: 5 })?.ttlMs, 5);
  });

  it('refuses a missing or malformed approver and a bad ttlMs (RUNTIME_OPTIONS_INVALID)', () => {
    const throwing = Object.defineProperty({}, 'approver', {
      get() {
        throw new Error('trap');
      },
    });
    for (const value of [
      null,
      'yes',
      {},
      throwing,
      { approver: null },
      { approver: { canApprove: true } },
      { approver: { canApprove: () => true }, ttlMs: -1 },
      { approver: { canApprove: () => true }, ttlMs: 1.5 },
      { approver: { canApprove: () => true }, ttlMs: '10' },
    ]) {
      assert.throws(
        () => checkApprovalsOption(value),
        (error: Error & { code?: string }) => error.code === 'RUNTIME_OPTIONS_INVALID',
      );
    }
  });
});

describe('askApprover', () => {
  const ask = (canApprove: ApproverPolicy['canApprove'], timeoutMs?: number) =>
    askApprover({ canApprove }, { id: 'bob' }, request, timeoutMs);

  it('is yes only for true or a promise of true', async () => {
    assert.equal(await ask(() => true), true);
    assert.equal(await ask(() => Promise.resolve(true)), true);
    for (const answer of [false, 'true', 1, {}, null, undefined, { then: 'x' }]) {
      assert.equal(await ask(() => answer as never), false, String(answer));
      assert.equal(await ask(() => Promise.resolve(answer) as never), false, String(answer));
    }
  });

  it('is no for a throw, a rejection and a hang past the limit', async () => {
    assert.equal(
      await ask(() => {
        throw new Error('boom');
      }),
      false,
    );
    assert.equal(await ask(() => Promise.reject(new Error('no'))), false);
    assert.equal(await ask(() => new Promise<boolean>(() => {}), 20), false);
  });

  it('gives the policy the approver and the request', async () => {
    const seen: unknown[] = [];
    await ask((approver, asked) => {
      seen.push(approver, asked);
      return true;
    });
    assert.deepEqual(seen, [{ id: 'bob' }, request]);
  });
});
