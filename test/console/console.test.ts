// The audit console (docs/guide/http.md, "Audit console") in a real headless Chromium, against the
// built `warrant serve --token ... --approvals` on a SQLite file seeded by `warrant run`: the page
// asks for the token once and sends it as a bearer header; the list shows a completed, a denied and
// an awaiting job, filters them and refreshes; the timeline shows a denial's reason and the chain
// verification; approving from the page completes the job; recorded markup shows as text and runs
// nothing. With WARRANT_SCREENSHOTS=1 it also writes docs/console-jobs.png and
// docs/console-timeline.png.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { call, serveChild, type Served } from '../support/serve-child.js';
import { launchBrowser, type Browser } from './browser.js';

const MAIN = resolve(import.meta.dirname, '../../dist/esm/cli/main.js');
const POLICY = resolve(import.meta.dirname, 'fixtures/policy.mjs');
const DOCS = resolve(import.meta.dirname, '../../docs');
const TOKEN = 'console-test-token-5f1c';
const SCREENSHOTS = process.env.WARRANT_SCREENSHOTS === '1';
// Markup in a recorded result: an image whose request and handler would both be seen, a script.
const PAYLOAD =
  '<img src="/xss-marker-img" onerror="window.pwned=1;fetch(\'/xss-marker-fetch\');alert(1)">' +
  '<script>window.pwned=2;alert(2)</script>';
const MARKUP_GOAL = 'Echo <b>markup</b> as text';

const dir = mkdtempSync(join(tmpdir(), 'warrant-console-'));
const root = join(dir, 'root');
const store = `sqlite:${join(dir, 'jobs.db')}`;
const common = [
  ...['--store', store, '--fs-root', root, '--authorizer', POLICY, '--approvals'],
  ...['--plan-versions', '1.0,2.0'],
];

/** Runs one plan with `warrant run` as the caller ada; the job id and the exit code. */
function seed(name: string, plan: unknown): { id: string; status: number | null } {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(plan));
  const run = spawnSync(
    process.execPath,
    [MAIN, 'run', file, ...common, '--caller', JSON.stringify({ id: 'ada' })],
    { encoding: 'utf8', timeout: 60_000 },
  );
  const id = run.stdout.trim().split('\n').pop() ?? '';
  assert.match(id, /\S/, `warrant run ${name}: ${run.stderr}`);
  return { id, status: run.status };
}

describe('the audit console in Chromium', { timeout: 240_000 }, () => {
  let served: Served | undefined;
  let browser: Browser | undefined;
  let address = '';
  let page: Page;
  const jobs = { markup: '', denied: '', awaiting: '' };
  const dialogs: string[] = [];
  const markers: string[] = [];
  const pageErrors: string[] = [];
  const apiRequests: { url: string; authorization: string | undefined }[] = [];

  before(async () => {
    // First, so a machine without Chromium fails at once with how to install it.
    browser = await launchBrowser();
    mkdirSync(join(root, 'secret'), { recursive: true });
    writeFileSync(join(root, 'note.txt'), 'hello from the note');
    writeFileSync(join(root, 'secret', 'key.txt'), 'do not read');
    const markup = seed('markup', {
      version: '1.0',
      goal: MARKUP_GOAL,
      steps: [{ id: 'echo', capability: 'system.echo', input: { message: PAYLOAD } }],
    });
    const denied = seed('denied', {
      version: '2.0',
      goal: 'Read the secret key',
      steps: [
        { id: 'greet', capability: 'system.echo', input: { message: 'before the secret' } },
        { id: 'secret', capability: 'fs.read', input: { path: 'secret/key.txt' } },
      ],
    });
    const awaiting = seed('awaiting', {
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
    });
    assert.deepEqual([markup.status, denied.status, awaiting.status], [0, 1, 3]);
    Object.assign(jobs, { markup: markup.id, denied: denied.id, awaiting: awaiting.id });

    served = serveChild(['--token', TOKEN, ...common]);
    address = await served.listening;
    page = await browser.context.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss().catch(() => {});
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.includes('xss-marker')) markers.push(url.pathname);
      if (url.pathname.startsWith('/api/'))
        apiRequests.push({ url: url.pathname, authorization: request.headers().authorization });
    });
  });

  after(async () => {
    await browser?.close();
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async (hash: string) => {
    await page.goto(`${address}/${hash}`);
  };
  /**
   * Waits until the job list shows exactly these jobs, in this order: checked in the page at
   * each animation frame (bounded, 15 s); a list still different then fails showing both.
   */
  const rowsAre = async (expected: string[]) => {
    await page
      .waitForFunction(
        (want) => {
          const { document } = globalThis as unknown as {
            document: {
              querySelectorAll(
                selector: string,
              ): Iterable<{ dataset: Record<string, string | undefined> }>;
            };
          };
          const rows = Array.from(document.querySelectorAll('#jobs tbody tr'));
          return JSON.stringify(rows.map((row) => row.dataset.job)) === want;
        },
        JSON.stringify(expected),
        { polling: 'raf', timeout: 15_000 },
      )
      .catch((error: unknown) => {
        if ((error as Error).name !== 'TimeoutError') throw error;
      });
    const rows = await page
      .locator('#jobs tbody tr')
      .evaluateAll((found) => found.map((row) => row.dataset.job));
    assert.deepEqual(rows, expected);
  };

  it('asks for the token once, keeps it for the tab and sends it as a bearer header', async () => {
    await open('');
    await page.locator('#token-form').waitFor({ state: 'visible' });
    await page.fill('#token-input', 'not-the-token');
    await page.press('#token-input', 'Enter');
    await page.getByText('The token was not accepted').waitFor();
    assert.equal(await page.textContent('#signed-in'), '', 'nobody is signed in yet');

    const before = apiRequests.length;
    await page.fill('#token-input', TOKEN);
    await page.press('#token-input', 'Enter');
    await page.locator('#jobs table').waitFor();
    assert.equal(await page.isHidden('#token-form'), true);
    // The header shows who the server takes the tab for (GET /api/caller): the --token caller.
    await page.locator('#signed-in', { hasText: 'Signed in as token · 1 scope' }).waitFor();
    assert.equal(await page.textContent('#signed-in'), 'Signed in as token · 1 scope');

    // Reloading the tab and moving between the views does not ask again.
    await page.reload();
    await page.locator('#jobs table').waitFor();
    for (const hash of ['#/capabilities', '#/approvals', `#/jobs/${jobs.denied}`, '#/']) {
      await open(hash);
      await page.locator('main h1').waitFor();
      assert.equal(await page.isHidden('#token-form'), true, hash);
    }
    const sent = apiRequests.slice(before);
    assert.ok(sent.length > 5, 'the page asked the API');
    for (const request of sent) assert.equal(request.authorization, `Bearer ${TOKEN}`, request.url);
    assert.deepEqual(await browser?.context.cookies(), [], 'no cookie');
    const storage = await page.evaluate(() => {
      const tab = globalThis as unknown as Record<
        'sessionStorage' | 'localStorage',
        { length: number }
      >;
      return { session: tab.sessionStorage.length, local: tab.localStorage.length };
    });
    assert.deepEqual(storage, { session: 1, local: 0 });
  });

  it('lists the completed, denied and awaiting jobs, newest first, and filters them', async () => {
    await open('#/');
    const rows = page.locator('#jobs tbody tr');
    await rows.first().waitFor();
    assert.deepEqual(
      await rows.evaluateAll((found) =>
        found.map((row) => [row.getAttribute('data-job'), row.getAttribute('data-status')]),
      ),
      [
        [jobs.awaiting, 'awaiting_approval'],
        [jobs.denied, 'failed'],
        [jobs.markup, 'completed'],
      ],
    );
    const awaitingRow = page.locator(`tr[data-job="${jobs.awaiting}"]`);
    assert.match(await awaitingRow.innerText(), /Copy the note[\s\S]*ada/);
    if (SCREENSHOTS) await page.screenshot({ path: join(DOCS, 'console-jobs.png') });

    await page.selectOption('select[name="status"]', 'failed');
    await page.click('.filters button');
    await page.waitForURL(/status=failed/);
    await rowsAre([jobs.denied]);

    await open('#/?capability=fs.write');
    await rowsAre([jobs.awaiting]);
    assert.equal(await page.inputValue('select[name="capability"]'), 'fs.write');

    await open(`#/?goal=${encodeURIComponent(MARKUP_GOAL)}`);
    await rowsAre([jobs.markup]);
  });

  it('refreshes the list while it is open', async () => {
    await open('#/');
    await page.locator(`tr[data-job="${jobs.awaiting}"]`).waitFor();
    const answer = await call(address, 'POST', '/api/plans', {
      token: TOKEN,
      body: {
        version: '1.0',
        goal: 'Arrives while the page is open',
        steps: [{ id: 'echo', capability: 'system.echo', input: { message: 'live' } }],
      },
    });
    assert.equal(answer.status, 201, JSON.stringify(answer.json));
    await page
      .locator(`tr[data-job="${String(answer.json.id)}"][data-status="completed"]`)
      .waitFor({ timeout: 20_000 });
  });

  it("shows a denial's reason, the decision record and the chain verification on the timeline", async () => {
    await open(`#/jobs/${jobs.denied}`);
    const secret = page.locator('li[data-step="secret"]');
    await secret.waitFor();
    assert.equal(await secret.locator('.decision .badge').innerText(), 'deny');
    assert.equal(
      (await secret.locator('.decision .reason').innerText()).trim(),
      'Secrets stay sealed: no plan reads secret/',
    );
    assert.match(await secret.innerText(), /sha256:[0-9a-f]{64}/);
    assert.match(await secret.innerText(), /console-test-policy/);
    assert.match(await page.locator('dl.fields').first().innerText(), /Plan version\s+2\.0/);
    assert.equal(await page.locator('li[data-step="greet"] .badge-completed').count(), 1);
    assert.match(await page.locator('#verification').innerText(), /^Record verified: \d+ events/);
    await page.locator('tr[data-event="capability.denied"]').waitFor();
    assert.match(
      await page.locator('tr[data-event="capability.denied"]').innerText(),
      /Secrets stay sealed/,
    );
    if (SCREENSHOTS)
      await page.screenshot({ path: join(DOCS, 'console-timeline.png'), fullPage: true });
  });

  it('approves a pending write from the page, with the digest shown, and the job completes', async () => {
    const listed = await call(address, 'GET', `/api/approvals?jobId=${jobs.awaiting}`, {
      token: TOKEN,
    });
    const [request] = listed.json as unknown as {
      stepId: string;
      inputDigest: string;
      effect: { op: string; path: string };
      effectDigest: string;
    }[];
    assert.equal(request?.stepId, 'write-copy');

    // The waiting job's record is intact: no red banner above its Approve button.
    await open(`#/jobs/${jobs.awaiting}`);
    await page.locator('#verification').waitFor();
    assert.match(await page.locator('#verification').innerText(), /^Record verified/);

    await open('#/approvals');
    const card = page.locator(`li.card[data-job="${jobs.awaiting}"]`);
    await card.waitFor();
    assert.equal(await card.locator('.approval > p code').innerText(), request.inputDigest);
    // The effect the approval covers (docs/api.md, "Prepared effects"), and its digest.
    assert.equal(request.effect.op, 'write');
    const effect = JSON.parse(
      await card.locator('.approval pre[data-field="effect"]').innerText(),
    ) as { op: string; path: string };
    assert.deepEqual(effect, request.effect);
    assert.equal(await card.locator('.approval dd code').innerText(), request.effectDigest);
    assert.equal(await page.locator('#approval-count').innerText(), '(1)');
    await card.locator('input[aria-label="comment"]').fill('checked the copy');
    await card.locator('button.approve').click();

    await page.waitForURL(new RegExp(`#/jobs/${jobs.awaiting}$`));
    await page.locator('h1 .badge-completed').waitFor();
    await page.locator('tr[data-event="approval.granted"]').waitFor();
    assert.equal(readFileSync(join(root, 'copy.txt'), 'utf8'), 'hello from the note');
    const job = await call(address, 'GET', `/api/jobs/${jobs.awaiting}`, { token: TOKEN });
    const record = job.json as unknown as {
      status: string;
      events: { type: string; data?: { approver?: string; comment?: string } }[];
    };
    assert.equal(record.status, 'completed');
    assert.equal(
      record.events.find((event) => event.type === 'approval.granted')?.data?.comment,
      'checked the copy',
      "the grant's comment is kept",
    );
    assert.match(
      await page.locator('tr[data-event="approval.granted"]').innerText(),
      /checked the copy/,
    );
    assert.equal(
      record.events.find((event) => event.type === 'approval.granted')?.data?.approver,
      'token',
      'the approver is the authenticated caller',
    );
    assert.match(await page.locator('#verification').innerText(), /^Record verified/);
    assert.match(await page.locator('dl.fields').first().innerText(), /Plan version\s+1\.0/);
  });

  it('shows recorded markup and script as text and runs none of it', async () => {
    await open(`#/jobs/${jobs.markup}`);
    const result = page.locator('li[data-step="echo"] pre[data-field="result"]');
    await result.waitFor();
    assert.match(await result.innerText(), /"message": "<img src=\\"\/xss-marker-img\\"/);
    assert.ok((await result.innerText()).includes('<script>window.pwned=2;alert(2)</script>'));
    const input = page.locator('li[data-step="echo"] pre[data-field="input"]');
    assert.ok((await input.innerText()).includes('onerror='));
    assert.equal(await page.locator('h1').first().innerText(), `${MARKUP_GOAL} completed`);

    await open('#/');
    const link = page.locator(`tr[data-job="${jobs.markup}"] a`);
    assert.equal(await link.innerText(), MARKUP_GOAL);
    await open(`#/approvals`);
    await page.locator('main h1').waitFor();
    await open(`#/jobs/${jobs.markup}`);
    await result.waitFor();

    assert.equal(await page.locator('main img, main script, main b').count(), 0);
    assert.equal(await page.evaluate(() => (globalThis as { pwned?: unknown }).pwned), undefined);
    assert.deepEqual(dialogs, [], 'no dialog opened');
    assert.deepEqual(markers, [], 'no marker URL requested');
    assert.deepEqual(pageErrors, [], 'the page threw nothing');
  });
});
