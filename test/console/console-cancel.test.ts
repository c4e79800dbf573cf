// Cancelling from the audit console (docs/guide/http.md, "Audit console"), in a real headless
// Chromium against the built `warrant serve --token --approvals` on a SQLite file seeded by
// `warrant run`: a job awaiting approval shows a Cancel button; the server's refusal (403: the
// token's caller did not submit the job and holds no warrant:cancel) shows as a message and changes
// nothing; the submitter's cancel ends the job, which then shows the `cancelled` badge on its page
// and in the list, and no Cancel button.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { call, serveChild, type Served } from '../support/serve-child.js';
import { launchBrowser, type Browser } from './browser.js';

const MAIN = resolve(import.meta.dirname, '../../dist/esm/cli/main.js');
const MODULE = resolve(import.meta.dirname, 'fixtures/zod-module.mjs');
const TOKEN = 'console-cancel-token-41ab';

const dir = mkdtempSync(join(tmpdir(), 'warrant-console-cancel-'));
const store = `sqlite:${join(dir, 'jobs.db')}`;
const common = ['--store', store, '--module', MODULE, '--approvals'];

/** One plan run by `warrant run` as `callerId`, stopped for approval; its job id. */
function seedAwaiting(callerId: string, goal: string): string {
  const plan = join(dir, `${callerId}.json`);
  writeFileSync(
    plan,
    JSON.stringify({
      version: '1.0',
      goal,
      steps: [{ id: 'pay', capability: 'ux.transfer', input: { currency: 'EUR', cents: 100 } }],
    }),
  );
  const run = spawnSync(
    process.execPath,
    [MAIN, 'run', plan, ...common, '--caller', JSON.stringify({ id: callerId })],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(run.status, 3, run.stderr);
  return run.stdout.trim();
}

describe('the audit console: cancelling a job', { timeout: 240_000 }, () => {
  let served: Served | undefined;
  let browser: Browser | undefined;
  let address = '';
  let page: Page;
  let own = '';
  let others = '';

  before(async () => {
    browser = await launchBrowser();
    // `--token` authenticates every request as { id: 'token' }: the submitter of `own`.
    own = seedAwaiting('token', 'Pay my own invoice');
    others = seedAwaiting('ada', "Pay ada's invoice");
    served = serveChild(['--token', TOKEN, ...common]);
    address = await served.listening;
    page = await browser.context.newPage();
    await page.goto(`${address}/`);
    await page.locator('#token-form').waitFor({ state: 'visible' });
    await page.fill('#token-input', TOKEN);
    await page.press('#token-input', 'Enter');
    await page.locator('#jobs table').waitFor();
  });

  after(async () => {
    await browser?.close();
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The awaiting badge in the heading of the job page with this goal. */
  const pageOf = (goal: string) =>
    page.locator('h1', { hasText: goal }).locator('.badge-awaiting_approval');

  const statusOf = async (id: string) => {
    const answer = await call(address, 'GET', `/api/jobs/${id}`, { token: TOKEN });
    return answer.json.status;
  };

  it("shows the server's refusal as a message and leaves the job awaiting", async () => {
    await page.goto(`${address}/#/jobs/${others}`);
    await pageOf("Pay ada's invoice").waitFor();
    await page.click('button.cancel');
    const outcome = page.locator('.cancel-panel .outcome.error');
    await outcome.waitFor();
    assert.match(await outcome.innerText(), /^Refused: 403 /);
    assert.equal(await statusOf(others), 'awaiting_approval');
  });

  it("cancels the caller's own job: the cancelled badge on its page and in the list, no button", async () => {
    await page.goto(`${address}/#/jobs/${own}`);
    // Only a hash changes: until this job's page replaces the previous one, that one's heading,
    // badge and button are still there to be clicked.
    await pageOf('Pay my own invoice').waitFor();
    await page.click('button.cancel');
    await page.locator('h1 .badge-cancelled').waitFor();
    assert.equal(await page.locator('button.cancel').count(), 0);
    assert.equal(await statusOf(own), 'cancelled');
    await page.goto(`${address}/#/`);
    await page.locator(`tr[data-job="${own}"] .badge-cancelled`).waitFor();
    const color = await page.locator(`tr[data-job="${own}"] .badge-cancelled`).evaluate(
      (node) =>
        (
          globalThis as unknown as {
            getComputedStyle(element: unknown): { backgroundColor: string };
          }
        ).getComputedStyle(node).backgroundColor,
    );
    // Styled as its own status, not the default badge.
    assert.equal(color, 'rgb(223, 225, 230)');
  });
});
