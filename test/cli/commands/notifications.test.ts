// `--notify` on `warrant serve` and `warrant notifications` (docs/guide/notifications.md,
// "Notifications"), with the built program: a notification written before the server is SIGKILLed
// is delivered by the next server on the store, and the command lists what is still pending.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { call, serveChild, serveFails } from '../../support/serve-child.js';
import { newSecret, startReceiver } from '../../support/webhook-receiver.js';

const MAIN = resolve(import.meta.dirname, '../../../dist/esm/cli/main.js');
const directory = mkdtempSync(join(tmpdir(), 'warrant-notify-cli-'));
after(() => rmSync(directory, { recursive: true, force: true }));

const run = promisify(execFile);

describe('warrant serve --notify', () => {
  it('delivers after a SIGKILL between the event and its delivery; warrant notifications lists it until then', async () => {
    const secret = newSecret();
    const secretFile = join(directory, 'hook.secret');
    writeFileSync(secretFile, `${secret}\n`);
    const store = `sqlite:${join(directory, 'jobs.db')}`;
    const receiver = await startReceiver(secret);
    await receiver.down();
    const args = [
      '--store',
      store,
      '--notify',
      receiver.url,
      '--notify-allow-private',
      '--notify-secret-file',
      secretFile,
    ];
    const first = serveChild(args);
    const address = await first.listening;
    const answer = await call(address, 'POST', '/api/plans', {
      body: {
        version: '1.0',
        goal: 'notify me',
        steps: [{ id: 'a', capability: 'system.echo', input: { message: 'hello' } }],
      },
    });
    assert.equal(answer.status, 201);
    const jobId = answer.json.id as string;
    // Killed with the notification written and not delivered (its receiver is down).
    first.child.kill('SIGKILL');
    await first.exited;

    const listed = await run(
      process.execPath,
      [MAIN, 'notifications', '--store', store, '--json'],
      {
        timeout: 30_000,
      },
    );
    const rows = JSON.parse(listed.stdout) as { jobId: string; type: string; status: string }[];
    assert.deepEqual(
      rows.map((row) => [row.jobId, row.type, row.status]),
      [[jobId, 'job.completed', 'pending']],
    );
    assert.doesNotMatch(listed.stdout, new RegExp(secret.slice(6).replace(/[+/=]/g, '.')));

    await receiver.up();
    const second = serveChild(args);
    await second.listening;
    try {
      await receiver.until(() => receiver.deliveries.length > 0, 30_000);
      const [delivery] = receiver.deliveries;
      assert.equal(delivery?.verified, true);
      assert.equal(delivery?.payload.type, 'job.completed');
      assert.equal(delivery?.payload.jobId, jobId);
    } finally {
      await second.stop();
    }
    const after = await run(process.execPath, [MAIN, 'notifications', '--store', store], {
      timeout: 30_000,
    });
    assert.match(after.stdout, /No notifications pending or failed/);
  });

  it('refuses --notify without a secret file, and a secret that is not whsec_ (exit 2, secret not shown)', async () => {
    const missing = await serveFails(['--notify', 'http://127.0.0.1:9/']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--notify needs --notify-secret-file/);
    const file = join(directory, 'bad.secret');
    writeFileSync(file, 'not-a-secret-VALUE\n');
    const bad = await serveFails(['--notify', 'http://127.0.0.1:9/', '--notify-secret-file', file]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--notify-secret-file must be a Standard Webhooks secret/);
    assert.doesNotMatch(bad.stderr, /not-a-secret-VALUE/);
  });

  it('refuses a repeated --notify (or its companions) with exit 2 instead of keeping the last', async () => {
    const twice = await serveFails([
      '--notify',
      'http://127.0.0.1:9/a',
      '--notify',
      'http://127.0.0.1:9/b',
      '--notify-format',
      'slack',
    ]);
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /--notify may be given once/);
    const formats = await serveFails([
      '--notify',
      'http://127.0.0.1:9/a',
      '--notify-format',
      'slack',
      '--notify-format',
      'standard',
    ]);
    assert.equal(formats.code, 2);
    assert.match(formats.stderr, /--notify-format may be given once/);
  });
});
