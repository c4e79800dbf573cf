// The plan card of the audit console (docs/api.md, "Plan warrants"; docs/guide/http.md, "Audit
// console"), in a real headless Chromium against the built `warrant serve --token --approvals` on
// a SQLite file seeded by `warrant run --plan-approval`: the approvals page shows one card for the
// whole plan, every step with its preview outcome, its input (the result reference as written)
// and its bounds; Approve plan decides it with its digest, the steps run, and the job's timeline
// shows each write approved with the plan.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { copyExamples } from '../support/examples-copy.js';
import { serveChild, type Served } from '../support/serve-child.js';
import { launchBrowser, type Browser } from './browser.js';

const MAIN = resolve(import.meta.dirname, '../../dist/esm/cli/main.js');
const TOKEN = 'console-plan-token-51c7';

const dir = mkdtempSync(join(tmpdir(), 'warrant-console-plan-'));
const root = join(dir, 'examples/data');
const common = [
  ...['--store', `sqlite:${join(dir, 'jobs.db')}`, '--fs-root', root],
  ...['--approvals', '--plan-versions', '1.0,2.0'],
];

describe('the audit console: a plan card', { timeout: 240_000 }, () => {
  let served: Served | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let address = '';
  let jobId = '';

  before(async () => {
    copyExamples(dir);
    const run = spawnSync(
      process.execPath,
      [MAIN, 'run', join(dir, 'examples/plans/copy-note.json'), '--plan-approval', ...common],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(run.status, 3, run.stderr);
    jobId = run.stdout.trim();
    served = serveChild(['--token', TOKEN, ...common]);
    address = await served.listening;
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${address}/`);
    await page.fill('#token-input', TOKEN);
    await page.press('#token-input', 'Enter');
    await page.locator('#jobs table').waitFor();
  });

  after(async () => {
    await browser?.close();
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows every step of the plan with its preview, input or reference, and bounds', async () => {
    await page.goto(`${address}/#/approvals`);
    const card = page.locator(`li.plan-card[data-job="${jobId}"]`);
    await card.waitFor();
    const rows = card.locator('table.plan-steps tbody tr');
    assert.deepEqual(
      await rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-step'))),
      ['read-note', 'write-stamp', 'write-copy'],
    );
    const copy = card.locator('tr[data-step="write-copy"]');
    assert.equal(await copy.locator('.badge').innerText(), 'unknown');
    assert.match(
      await copy.locator('pre[data-field="input of write-copy"]').innerText(),
      /"\$ref":"steps\.read-note\.result\.content"/,
    );
    assert.deepEqual(
      JSON.parse(await copy.locator('pre[data-field="bounds of write-copy"]').innerText()),
      { content: { type: 'string', maxLength: 200 } },
    );
    assert.equal(
      await card.locator('tr[data-step="write-stamp"] .badge').innerText(),
      'require_approval',
    );
    assert.match(
      await card.locator('.plan-approval > p code').innerText(),
      /^sha256:[0-9a-f]{64}$/,
    );
  });

  it('approves the whole plan with its digest: both writes run, each approved with the plan', async () => {
    const card = page.locator(`li.plan-card[data-job="${jobId}"]`);
    const digest = await card.locator('.plan-approval > p code').innerText();
    await card.locator('button.approve').click();
    // The card goes to the job's timeline once decided.
    await page.locator('h1 .badge-completed').waitFor();
    await page.locator('tr[data-event="approval.granted"]').waitFor();
    assert.equal(readFileSync(join(root, 'stamp.txt'), 'utf8'), 'copied by Warrant');
    for (const step of ['write-stamp', 'write-copy']) {
      const grant = page.locator(`li.step[data-step="${step}"] .plan-grant`);
      assert.match(await grant.innerText(), new RegExp(`^with the plan, by token: ${digest}$`));
    }
    assert.equal(await page.locator('li.step[data-step="read-note"] .plan-grant').count(), 0);
  });
});
