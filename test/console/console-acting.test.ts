// The audit console shows who acted for whom (docs/api.md, "Callers: acting for someone"), in a
// real headless Chromium against the built `warrant serve --callers <file> --approvals`: an
// assistant whose entry lists `mayActFor: ["ada"]` submits a write for ada with
// Warrant-On-Behalf-Of; signed in as ada, the jobs list, the job page and the approval card say
// "assistant for ada", and ada approves it from the card.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { call, serveChild, type Served } from '../support/serve-child.js';
import { launchBrowser, type Browser } from './browser.js';

const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const ASSISTANT = 'console-acting-assistant-4f1a';
const ADA = 'console-acting-ada-9b3c';
const dir = mkdtempSync(join(tmpdir(), 'warrant-console-acting-'));
const root = join(dir, 'files');
mkdirSync(root);
const callersFile = join(dir, 'callers.json');
writeFileSync(
  callersFile,
  JSON.stringify({
    callers: [
      { tokenSha256: sha(ASSISTANT), caller: { id: 'assistant', scopes: [] }, mayActFor: ['ada'] },
      { tokenSha256: sha(ADA), caller: { id: 'ada', scopes: [] } },
    ],
  }),
  { mode: 0o600 },
);

describe('the audit console: acting for someone', { timeout: 240_000 }, () => {
  let served: Served | undefined;
  let browser: Browser | undefined;
  let address = '';
  let jobId = '';
  let page: Page;

  before(async () => {
    browser = await launchBrowser();
    served = serveChild(['--callers', callersFile, '--fs-root', root, '--approvals']);
    address = await served.listening;
    const plan = {
      version: '1.0',
      steps: [{ id: 'note', capability: 'fs.write', input: { path: 'n.txt', content: 'hi' } }],
    };
    const forged = await call(address, 'POST', '/api/plans', {
      token: ADA,
      headers: { 'warrant-on-behalf-of': 'assistant' },
      body: plan,
    });
    assert.equal(forged.status, 401, 'ada may not act for anyone');
    const submitted = await call(address, 'POST', '/api/plans', {
      token: ASSISTANT,
      headers: { 'warrant-on-behalf-of': 'ada' },
      body: plan,
    });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.json));
    jobId = String((submitted.json as { id: string }).id);
    page = await browser.context.newPage();
    await page.goto(`${address}/`);
    await page.locator('#token-form').waitFor({ state: 'visible' });
    await page.fill('#token-input', ADA);
    await page.press('#token-input', 'Enter');
    await page.locator('#jobs table').waitFor();
  });

  after(async () => {
    await browser?.close();
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says "assistant for ada" on the job row and the job page', async () => {
    const row = await page.locator('#jobs tbody tr').first().innerText();
    assert.match(row, /assistant for ada/);
    await page.goto(`${address}/#/jobs/${jobId}`);
    await page.locator('h1').waitFor();
    assert.match(await page.locator('dl.fields').first().innerText(), /Acting\s+assistant for ada/);
  });

  it('says it on the approval card, from which ada approves what the assistant proposed', async () => {
    await page.goto(`${address}/#/approvals`);
    const card = page.locator(`li.card[data-job="${jobId}"]`);
    await card.waitFor();
    assert.match(await card.innerText(), /Requested by\s+assistant for ada/);
    await card.locator('button.approve').click();
    await page.waitForURL(new RegExp(`#/jobs/${jobId}$`));
    await page.locator('h1 .badge-completed').waitFor();
    assert.equal(readFileSync(join(root, 'n.txt'), 'utf8'), 'hi');
  });
});
