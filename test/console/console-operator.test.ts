// The console link of `npm start`, followed as a new user would (issue 47 item 1; docs/api.md,
// "The operator token"): npm start's script runs the quick start's plan, the `warrant serve`
// command it prints runs as printed (on a free port), the console address that server prints on
// stdout opens in a real headless Chromium, which keeps the token and takes it out of the address
// bar; the job's timeline (npm start's job address) shows the write awaiting approval, Approve
// completes it, and the job stays readable. The token shows nowhere but that one stdout line:
// not on stderr, not in the store.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { copyExamples } from '../support/examples-copy.js';
import { call } from '../support/serve-child.js';
import { Output } from '../support/wait.js';
import { launchBrowser, type Browser } from './browser.js';

const cwd = mkdtempSync(join(tmpdir(), 'warrant-console-operator-'));
const children: ReturnType<typeof spawn>[] = [];
let browser: Browser | undefined;
after(async () => {
  await browser?.close();
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(cwd, { recursive: true, force: true });
});

const CONSOLE_LINE = /Audit console \(operator token for this run, may approve\): (http:\/\/\S+)\n/;

describe('the console link of npm start', { timeout: 240_000 }, () => {
  it("leads to the job's timeline, where the write is approved with the printed token", async () => {
    copyExamples(cwd);
    cpSync(resolve('scripts'), join(cwd, 'scripts'), { recursive: true });
    symlinkSync(resolve('dist'), join(cwd, 'dist'));
    symlinkSync(resolve('node_modules'), join(cwd, 'node_modules'));
    const start = spawnSync(process.execPath, ['scripts/start.mjs'], {
      cwd,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(start.status, 0, start.stderr);
    const lines = start.stdout.trimEnd().split('\n');
    const id = lines[0]?.trim() ?? '';
    const serve = lines.find((line) => line.trim().startsWith('npm run warrant -- serve'));
    const jobAddress = lines.at(-1)?.trim() ?? '';
    assert.equal(jobAddress, `http://127.0.0.1:3333/#/jobs/${id}`);

    // The printed command, as printed, on a free port instead of 3333.
    const words = (serve ?? '').trim().split(' ').slice(4);
    const child = spawn(process.execPath, ['dist/esm/cli/main.js', ...words, '--port', '0'], {
      cwd,
      env: { ...process.env, WARRANT_TOKEN: undefined, WARRANT_JWT_SECRET: undefined },
    });
    children.push(child);
    const stdout = new Output(child.stdout);
    const stderr = new Output(child.stderr);
    const printed = CONSOLE_LINE.exec(
      await stdout.match(CONSOLE_LINE, { timeoutMs: 30_000, what: 'the console address' }),
    );
    const consoleAddress = printed?.[1] ?? '';
    const match = /^(http:\/\/127\.0\.0\.1:\d+)\/#token=([A-Za-z0-9_-]{43})$/.exec(consoleAddress);
    assert.ok(match, consoleAddress);
    const [, origin = '', token = ''] = match;
    await stderr.match(/listening on http:\/\//);

    browser = await launchBrowser();
    const page = await browser.context.newPage();
    await page.goto(consoleAddress);
    await page.locator('#signed-in', { hasText: 'Signed in as operator · 1 scope' }).waitFor();
    await page.locator(`#jobs tr[data-job="${id}"]`).waitFor();
    assert.equal(page.url(), `${origin}/#/`, 'the token is taken out of the address bar');
    assert.equal(await page.locator('#token-form').isHidden(), true);

    // npm start's address of the job, in the same tab.
    await page.goto(jobAddress.replace('http://127.0.0.1:3333', origin));
    await page.locator('h1 .badge-awaiting_approval').waitFor();
    await page.locator('#verification').waitFor();
    await page.locator('button.approve').click();
    await page.locator('h1 .badge-completed').waitFor();
    await page.locator('tr[data-event="approval.granted"]').waitFor();
    assert.equal(
      readFileSync(join(cwd, 'examples/data/copy.txt'), 'utf8'),
      readFileSync(join(cwd, 'examples/data/note.txt'), 'utf8'),
      'the approved write ran',
    );

    const job = await call(origin, 'GET', `/api/jobs/${id}`, { token });
    assert.equal(job.status, 200);
    const events = job.json.events as { type: string; data?: { approver?: string } }[];
    assert.equal(
      events.find((event) => event.type === 'approval.granted')?.data?.approver,
      'operator',
    );
    // Without the token a request is `http` as before: it may not approve.
    const anonymous = await call(origin, 'GET', '/api/approvals');
    assert.equal(anonymous.status, 403);
    assert.match(anonymous.json.error ?? '', /operator token/);

    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
    assert.equal(stdout.text.split(token).length, 2, 'the token is printed once, on stdout');
    assert.ok(!stderr.text.includes(token), 'never on stderr');
    for (const file of readdirSync(join(cwd, '.warrant')))
      assert.ok(
        !readFileSync(join(cwd, '.warrant', file)).includes(token),
        `never in the store (${file})`,
      );
  });
});
