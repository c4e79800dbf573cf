// What users hit first in the audit console (docs/guide/http.md, "Audit console"), in a real
// headless Chromium against the built `warrant serve --token`: before a token is entered the page
// costs one 401, not one per request; an approval card shows its job's goal; a capability shows its
// input's JSON Schema (a zod enum, an integer, bounds); at 420 px wide no digest is cut off.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { serveChild, type Served } from '../support/serve-child.js';
import { launchBrowser, type Browser } from './browser.js';

const MAIN = resolve(import.meta.dirname, '../../dist/esm/cli/main.js');
const MODULE = resolve(import.meta.dirname, 'fixtures/zod-module.mjs');
const TOKEN = 'console-ux-token-9d2e';
const GOAL = 'Pay the supplier invoice 2026-117';

const dir = mkdtempSync(join(tmpdir(), 'warrant-console-ux-'));
const store = `sqlite:${join(dir, 'jobs.db')}`;
const common = ['--store', store, '--module', MODULE, '--approvals'];

describe('the audit console: what users hit first', { timeout: 240_000 }, () => {
  let served: Served | undefined;
  let browser: Browser | undefined;
  let address = '';
  let page: Page;
  let jobId = '';
  const unauthorized: string[] = [];

  before(async () => {
    browser = await launchBrowser();
    const plan = join(dir, 'plan.json');
    writeFileSync(
      plan,
      JSON.stringify({
        version: '1.0',
        goal: GOAL,
        steps: [{ id: 'pay', capability: 'ux.transfer', input: { currency: 'EUR', cents: 4200 } }],
      }),
    );
    const run = spawnSync(
      process.execPath,
      [MAIN, 'run', plan, ...common, '--caller', JSON.stringify({ id: 'ada' })],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(run.status, 3, run.stderr);
    jobId = run.stdout.trim();
    served = serveChild(['--token', TOKEN, ...common]);
    address = await served.listening;
    page = await browser.context.newPage();
    page.on('response', (response) => {
      if (response.status() === 401) unauthorized.push(new URL(response.url()).pathname);
    });
  });

  after(async () => {
    await browser?.close();
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks for the token after one 401, not one per request', async () => {
    await page.goto(`${address}/`);
    await page.locator('#token-form').waitFor({ state: 'visible' });
    // Give any further request of the first render time to be answered (bounded).
    await page.waitForLoadState('networkidle', { timeout: 10_000 }).catch(() => {});
    assert.equal(unauthorized.length, 1, unauthorized.join(', '));
    await page.fill('#token-input', TOKEN);
    await page.press('#token-input', 'Enter');
    await page.locator('#jobs table').waitFor();
    assert.equal(unauthorized.length, 1, unauthorized.join(', '));
  });

  it("shows the job's goal on its approval card", async () => {
    await page.goto(`${address}/#/approvals`);
    const card = page.locator(`li.card[data-job="${jobId}"]`);
    await card.waitFor();
    assert.equal(await card.locator('.goal').innerText(), GOAL);
  });

  it("shows a capability's input JSON Schema: the enum, the integer and the bounds", async () => {
    await page.goto(`${address}/#/capabilities`);
    const card = page.locator('li.card[data-capability="ux.transfer"]');
    await card.waitFor();
    const text = await card.locator('pre[data-field="input JSON Schema"]').innerText();
    const schema = JSON.parse(text) as {
      properties: Record<string, Record<string, unknown>>;
    };
    assert.deepEqual(schema.properties.currency?.enum, ['EUR', 'USD']);
    assert.equal(schema.properties.cents?.type, 'integer');
    assert.equal(schema.properties.cents?.minimum, 1);
    assert.equal(schema.properties.cents?.maximum, 100000);
  });

  it('cuts no digest off at 420 px wide', async () => {
    await page.setViewportSize({ width: 420, height: 800 });
    for (const hash of ['#/approvals', `#/jobs/${jobId}`]) {
      await page.goto(`${address}/${hash}`);
      await page.locator('main h1').waitFor();
      await page.locator('main code').first().waitFor();
      const overflowing = await page.locator('main code').evaluateAll((codes) =>
        codes
          .filter((code) => (code.textContent ?? '').startsWith('sha256:'))
          .filter(
            (code) =>
              code.getBoundingClientRect().right >
              (globalThis as unknown as { innerWidth: number }).innerWidth + 0.5,
          )
          .map((code) => code.textContent),
      );
      assert.deepEqual(overflowing, [], hash);
      const width = await page.evaluate(
        () =>
          (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } })
            .document.documentElement.scrollWidth,
      );
      assert.ok(width <= 420, `${hash}: the page is ${width} px wide`);
    }
  });
});
