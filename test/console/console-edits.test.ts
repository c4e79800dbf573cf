// Approve with edits in the audit console (docs/api.md, "Approve with edits"; docs/guide/http.md,
// "Audit console"), in a real headless Chromium against the built `warrant serve --token ...
// --approvals` on a SQLite file seeded by `warrant run`: the approval card opens the proposed
// input as JSON, shows what an edit changes field by field (and text that is not JSON as such,
// with nothing to send), approves with the edited input, and the job's timeline then shows the
// proposed and the approved input, the grant marked edited, and an intact record; the approved
// input is what the write wrote.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { call, serveChild, type Served } from '../support/serve-child.js';
import { launchBrowser, type Browser } from './browser.js';

const MAIN = resolve(import.meta.dirname, '../../dist/esm/cli/main.js');
const POLICY = resolve(import.meta.dirname, 'fixtures/policy.mjs');
const TOKEN = 'console-edits-token-8c2e';

const dir = mkdtempSync(join(tmpdir(), 'warrant-console-edits-'));
const root = join(dir, 'root');
const common = [
  ...['--store', `sqlite:${join(dir, 'jobs.db')}`, '--fs-root', root],
  ...['--authorizer', POLICY, '--approvals'],
];

describe('approve with edits in the console, in Chromium', { timeout: 240_000 }, () => {
  let served: Served | undefined;
  let browser: Browser | undefined;
  let address = '';
  let page: Page;
  let jobId = '';
  const pageErrors: string[] = [];

  before(async () => {
    browser = await launchBrowser();
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'note.txt'), 'hello from the note');
    const plan = join(dir, 'copy.json');
    writeFileSync(
      plan,
      JSON.stringify({
        version: '1.0',
        goal: 'Copy the note',
        steps: [
          { id: 'read-note', capability: 'fs.read', input: { path: 'note.txt' } },
          {
            id: 'write-copy',
            capability: 'fs.write',
            input: { path: 'copy.txt', content: { $ref: 'steps.read-note.result.content' } },
          },
        ],
      }),
    );
    const run = spawnSync(
      process.execPath,
      [MAIN, 'run', plan, ...common, '--caller', JSON.stringify({ id: 'ada' })],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(run.status, 3, run.stderr);
    jobId = run.stdout.trim().split('\n').pop() ?? '';
    served = serveChild(['--token', TOKEN, ...common]);
    address = await served.listening;
    page = await browser.context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('edits the input as JSON, shows the changes, approves with them; the job shows the approved input', async () => {
    // The token as the address carries it; the page keeps it and goes on at the job list.
    await page.goto(`${address}/#token=${TOKEN}`);
    await page.locator('#jobs table').waitFor();
    await page.goto(`${address}/#/approvals`);
    const card = page.locator(`li.card[data-job="${jobId}"]`);
    await card.waitFor();
    await card.locator('button.edit-input').click();
    const editor = card.locator('textarea[aria-label="approved input"]');
    assert.deepEqual(JSON.parse(await editor.inputValue()), {
      path: 'copy.txt',
      content: 'hello from the note',
    });
    await card.getByText('No change from the proposed input.').waitFor();
    assert.equal(await card.locator('button.approve').innerText(), 'Approve');

    await editor.fill('{ "path": ');
    await card.locator('.diff .error', { hasText: /^Not JSON: / }).waitFor();
    assert.equal(await card.locator('button.approve').isDisabled(), true);

    await editor.fill(
      JSON.stringify({ path: 'edited.txt', content: 'edited in the console', mode: 'plain' }),
    );
    const changes = card.locator('ul.changes li');
    await changes.first().waitFor();
    assert.deepEqual(await changes.allInnerTexts(), [
      'input.content: "hello from the note" \u2192 "edited in the console"',
      '+ input.mode: "plain"',
      'input.path: "copy.txt" \u2192 "edited.txt"',
    ]);
    assert.deepEqual(
      await changes.evaluateAll((found) => found.map((item) => item.getAttribute('data-change'))),
      ['changed', 'added', 'changed'],
    );
    const approve = card.locator('button.approve');
    assert.equal(await approve.innerText(), 'Approve with edits');
    assert.equal(await approve.isDisabled(), false);
    await card.locator('input[aria-label="comment"]').fill('a copy of its own');
    await approve.click();

    await page.waitForURL(new RegExp(`#/jobs/${jobId}$`));
    await page.locator('h1 .badge-completed').waitFor();
    const step = page.locator('li[data-step="write-copy"]');
    const shown = async (field: string) =>
      JSON.parse(await step.locator(`pre[data-field="${field}"]`).innerText()) as unknown;
    assert.deepEqual(await shown('approved input'), {
      path: 'edited.txt',
      content: 'edited in the console',
      mode: 'plain',
    });
    assert.deepEqual(await shown('proposed input'), {
      path: 'copy.txt',
      content: 'hello from the note',
    });
    assert.match(
      await page.locator('tr[data-event="approval.granted"]').innerText(),
      /"edited": true/,
    );
    assert.match(await page.locator('#verification').innerText(), /^Record verified/);

    assert.equal(readFileSync(join(root, 'edited.txt'), 'utf8'), 'edited in the console');
    assert.equal(existsSync(join(root, 'copy.txt')), false, 'the proposed write never ran');
    const job = await call(address, 'GET', `/api/jobs/${jobId}`, { token: TOKEN });
    const granted = (job.json.events as { type: string; data?: Record<string, unknown> }[]).find(
      (event) => event.type === 'approval.granted',
    );
    assert.equal(granted?.data?.approver, 'token');
    assert.equal(granted?.data?.edited, true);
    assert.equal(granted?.data?.comment, 'a copy of its own');
    assert.deepEqual(pageErrors, [], 'the page threw nothing');
  });
});
