// `warrant serve --approvals` end to end, as the built program behind a real socket: a write
// submitted by one authenticated caller stops for approval (202), the submitter cannot approve it
// (403), a wrong digest is 409, another caller approves it (200) and the write runs once; the
// request is then consumed (409). Two servers on one SQLite file: the one without the job's
// capability refuses to approve (409 APPROVAL_CANNOT_RUN) and decides nothing; the one with it
// approves the same request afterwards and the write runs once.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../http/auth/fixtures/helpers.js';
import { call, serveChild, spawnServe } from '../support/serve-child.js';

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

  it('a server without the capability refuses the approval and decides nothing; one with it approves it later', async () => {
    const callers = dir.file(
      'two-callers.json',
      JSON.stringify({
        callers: [
          { tokenSha256: sha256('ada-token'), caller: { id: 'ada' } },
          { tokenSha256: sha256('grace-token'), caller: { id: 'grace' } },
        ],
      }),
      0o600,
    );
    const store = `sqlite:${join(root, 'shared.db')}`;
    const common = ['serve', '--port', '0', '--store', store, '--callers', callers, '--approvals'];
    const withFs = spawnServe([...common, '--fs-root', root]);
    const withoutFs = spawnServe(common);
    try {
      const [full, bare] = await Promise.all([withFs.listening, withoutFs.listening]);
      const stopped = await call(full, 'POST', '/api/capabilities/fs.write/execute', {
        token: 'ada-token',
        body: { input: { path: 'later.txt', content: 'approved later' } },
      });
      assert.equal(stopped.status, 202, JSON.stringify(stopped.json));
      const waiting = await call(full, 'GET', '/api/approvals', { token: 'grace-token' });
      const [request] = waiting.json as unknown as {
        jobId: string;
        stepId: string;
        inputDigest: string;
      }[];
      assert.ok(request !== undefined, JSON.stringify(waiting.json));
      const { jobId } = request;
      const path = `/api/jobs/${jobId}/steps/${encodeURIComponent(request.stepId)}/approval`;
      const body = { decision: 'approve', inputDigest: request.inputDigest };

      const refused = await call(bare, 'POST', path, { token: 'grace-token', body });
      assert.equal(refused.status, 409, JSON.stringify(refused.json));
      assert.match(String(refused.json.error), /does not register fs\.write@/);
      assert.equal(existsSync(join(root, 'later.txt')), false);
      // Nothing was decided: the request is still listed, on either server.
      const listed = await call(bare, 'GET', '/api/approvals', { token: 'grace-token' });
      assert.deepEqual(
        (listed.json as unknown as { jobId: string }[]).map((request) => request.jobId),
        [jobId],
      );

      const approved = await call(full, 'POST', path, { token: 'grace-token', body });
      assert.equal(approved.status, 200, JSON.stringify(approved.json));
      assert.equal((approved.json as { status?: string }).status, 'completed');
      assert.equal(readFileSync(join(root, 'later.txt'), 'utf8'), 'approved later');
    } finally {
      await Promise.all([withFs.stop(), withoutFs.stop()]);
    }
  });
});
