// The audit console's Limits view (docs/guide/http.md, "Audit console"; docs/api.md, "Limits"), in
// a real headless Chromium against the built `warrant serve --token --limits`: the configured limit
// is listed with its bound and window, and a step the token's caller ran shows in its counter.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { call, serveChild, type Served } from '../support/serve-child.js';
import { launchBrowser, type Browser } from './browser.js';

const TOKEN = 'console-limits-token-7c2e';
const dir = mkdtempSync(join(tmpdir(), 'warrant-console-limits-'));
const limitsFile = join(dir, 'limits.json');
writeFileSync(
  limitsFile,
  JSON.stringify([
    {
      name: 'echo-rate',
      match: { capability: 'system.echo' },
      per: 'caller',
      max: 5,
      windowMs: 60_000,
    },
  ]),
);

describe('the audit console: limits', { timeout: 240_000 }, () => {
  let served: Served | undefined;
  let browser: Browser | undefined;
  let address = '';
  let page: Page;

  before(async () => {
    browser = await launchBrowser();
    served = serveChild(['--token', TOKEN, '--limits', limitsFile]);
    address = await served.listening;
    const ran = await call(address, 'POST', '/api/plans', {
      token: TOKEN,
      body: {
        version: '1.0',
        steps: [{ id: 'say', capability: 'system.echo', input: { message: 'hi' } }],
      },
    });
    assert.equal(ran.status, 201, JSON.stringify(ran.json));
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

  it('lists the limit and the caller’s counter', async () => {
    await page.click('#nav-limits');
    await page.locator('#limits').waitFor();
    const limit = await page.locator('#limits tbody tr').first().innerText();
    assert.match(limit, /echo-rate/);
    assert.match(limit, /system\.echo/);
    assert.match(limit, /1 min/);
    const counter = await page.locator('#limit-counters tbody tr').first().innerText();
    assert.match(counter, /echo-rate/);
    assert.match(counter, /1 \/ 5/);
    assert.match(counter, /token/);
  });
});
