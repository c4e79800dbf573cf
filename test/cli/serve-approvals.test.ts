// `warrant serve --approvals` end to end, as the built program behind a real socket: a write
// submitted by one authenticated caller stops for approval (202), the submitter cannot approve it
// (403), a wrong digest is 409, another caller approves it (200) and the write runs once; the
// request is then consumed (409).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../http/auth/fixtures/helpers.js';
import { call, serveChild } from '../support/serve-child.js';

const dir = tempDir();
const root = mkdtempSync(join(tmpdir(), 'warrant-serve-approvals-'));
after(() => {
  dir.remove();
  rmSync(root, { recursive: true, force: true });
});
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('warrant serve --approvals', () => {
  it('stops a write for approval and runs it once, after another caller approves the exact input', async () => {
    const callers = dir.file(
      'callers.json',
      JSON.stringify({
        callers: [
          { tokenSha256: sha256('submitter-token'), caller: { id: 'ada' } },
          { tokenSha256: sha256('reviewer-token'), caller: { id: 'grace' } },
        ],
      }),
      0o600,
    );
    const served = serveChild(['--callers', callers, '--approvals', '--fs-root', root]);
    try {
      const address = await served.listening;
      const write = { input: { path: 'out.txt', content: 'approved' } };
      const stopped = await call(address, 'POST', '/api/capabilities/fs.write/execute', {
        token: 'submitter-token',
        body: write,
      });
      assert.equal(stopped.status, 202, JSON.stringify(stopped.json));
      assert.equal(existsSync(join(root, 'out.txt')), false);

      const listed = await call(address, 'GET', '/api/approvals', { token: 'reviewer-token' });
      assert.equal(listed.status, 200);
      const pending = listed.json as unknown as {
        jobId: string;
        stepId: string;
        inputDigest: string;
        caller?: { id?: string };
      }[];
      assert.equal(pending.length, 1);
      const [request] = pending as [(typeof pending)[number]];
      assert.equal(request.caller?.id, 'ada');
      const path = `/api/jobs/${request.jobId}/steps/${encodeURIComponent(request.stepId)}/approval`;
      const decide = (token: string, inputDigest: string) =>
        call(address, 'POST', path, { token, body: { decision: 'approve', inputDigest } });

      assert.equal((await decide('submitter-token', request.inputDigest)).status, 403);
      assert.equal((await decide('reviewer-token', `sha256:${'0'.repeat(64)}`)).status, 409);
      assert.equal(existsSync(join(root, 'out.txt')), false);

      const approved = await decide('reviewer-token', request.inputDigest);
      assert.equal(approved.status, 200, JSON.stringify(approved.json));
      assert.equal((approved.json as { status?: string }).status, 'completed');
      assert.equal(readFileSync(join(root, 'out.txt'), 'utf8'), 'approved');
      assert.equal((await decide('reviewer-token', request.inputDigest)).status, 409);
    } finally {
      await served.stop();
    }
  });
});
