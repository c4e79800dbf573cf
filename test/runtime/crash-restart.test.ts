// Crash and restart (issue 9): `warrant serve` on a SQLite file, as the program runs it, is
// SIGKILLed in the middle of a load of concurrent plans (allowed, denied, failing, refused, and
// a few that hang mid-step), then started again on the same file. Every job acknowledged with a
// job (201, 403, 500) is there and finished as answered, a refused plan left no job, no job is
// there twice, PRAGMA integrity_check is ok, and the jobs cut off are visible with their last
// recorded state: status `executing` (or `created`), steps completed up to a `running` or
// `pending` one, events agreeing with the steps. The restarted server serves new plans and takes
// up the cut-off jobs (docs/api.md, "Recovery"): a step that hung is `interrupted` and its job
// fails with STEP_INTERRUPTED; none is left executing.
//
// The default variant (one kill) stays fast; WARRANT_SOAK=1 (npm run test:soak) kills and
// restarts the server several times under a heavier load.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Database } from '../../src/stores/sqlite/sqlite-driver.cjs';
import { OperatorRuntime, type Job, type JobStep } from '../../src/index.js';
import { Changes, waitFor } from '../support/wait.js';

const SOAK = process.env.WARRANT_SOAK === '1';
const ROUNDS = SOAK ? 5 : 1;
const ACKED_PER_ROUND = SOAK ? 1500 : 150;
const WORKERS = SOAK ? 32 : 12;
const HANGING_PER_ROUND = 2;

const ROOT = resolve(import.meta.dirname, '../..');
const MODULE = resolve(ROOT, 'test/runtime/fixtures/crash-restart-capabilities.ts');
const directory = mkdtempSync(join(tmpdir(), 'warrant-crash-restart-'));
const file = join(directory, 'jobs.db');
const children: ChildProcessWithoutNullStreams[] = [];
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});

interface Served {
  readonly url: string;
  readonly child: ChildProcessWithoutNullStreams;
  stderr(): string;
}

/** `warrant serve` on the SQLite file, as a user starts it (the CLI through tsx). */
async function serve(): Promise<Served> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      resolve(ROOT, 'src/cli/main.ts'),
      'serve',
      '--port',
      '0',
      '--store',
      `sqlite:${file}`,
      '--module',
      MODULE,
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  children.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  const url = await new Promise<string>((listening, failed) => {
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (match) listening(match[1] as string);
    });
    child.once('exit', (code) => failed(new Error(`serve exited (${String(code)}): ${stderr}`)));
  });
  return { url, child, stderr: () => stderr };
}

type Kind = 'ok' | 'denied' | 'failing' | 'refused' | 'hang';

const PLANS: Record<
  Kind,
  { status: number; steps: unknown[]; recorded?: { status: string; steps: string[] } }
> = {
  ok: {
    status: 201,
    steps: [
      { id: 'one', capability: 'crash.work', input: { n: 1 } },
      { id: 'two', capability: 'crash.work', input: { from: { $ref: 'steps.one.result.done' } } },
      { id: 'three', capability: 'crash.work', input: { n: 3 } },
    ],
    recorded: { status: 'completed', steps: ['completed', 'completed', 'completed'] },
  },
  denied: {
    status: 403,
    steps: [
      { id: 'one', capability: 'crash.work', input: { n: 1 } },
      { id: 'two', capability: 'crash.write' },
      { id: 'three', capability: 'crash.work', input: { n: 3 } },
    ],
    recorded: { status: 'failed', steps: ['completed', 'failed', 'skipped'] },
  },
  failing: {
    status: 500,
    steps: [
      { id: 'one', capability: 'crash.work', input: { n: 1 } },
      { id: 'two', capability: 'crash.fail' },
    ],
    recorded: { status: 'failed', steps: ['completed', 'failed'] },
  },
  refused: {
    status: 400,
    steps: [
      { id: 'one', capability: 'crash.work' },
      { id: 'one', capability: 'crash.work' },
    ],
  },
  hang: {
    status: 0,
    steps: [
      { id: 'one', capability: 'crash.work', input: { n: 1 } },
      { id: 'two', capability: 'crash.hang' },
      { id: 'three', capability: 'crash.work', input: { n: 3 } },
    ],
  },
};
const LOAD_KINDS: Kind[] = ['ok', 'denied', 'failing', 'refused'];

interface Sent {
  readonly goal: string;
  readonly kind: Kind;
  /** Undefined when the request was cut off by the kill. */
  status?: number;
  jobId?: string;
}

async function postPlan(url: string, goal: string, kind: Kind): Promise<Response> {
  return fetch(`${url}/api/plans`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ version: '1.0', goal, steps: PLANS[kind].steps }),
  });
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  return (await response.json()) as T;
}

/** Every job in the file, read through the library: the soak records more jobs than one
 * answer of GET /api/jobs may hold (1,000). */
async function jobsOnDisk(): Promise<Job[]> {
  const runtime = new OperatorRuntime({ store: `sqlite:${file}` });
  try {
    return await runtime.listJobs();
  } finally {
    await runtime.close();
  }
}

/** Loads one server until enough plans are answered and the hanging steps run, then kills it. */
async function loadAndKill(served: Served, round: number): Promise<Sent[]> {
  const sent: Sent[] = [];
  let killed = false;
  let acknowledged = 0;
  const acknowledgements = new Changes();
  let counter = 0;
  const hanging = Array.from({ length: HANGING_PER_ROUND }, (_, index) => {
    const entry: Sent = { goal: `round ${round} hang ${index}`, kind: 'hang' };
    sent.push(entry);
    return postPlan(served.url, entry.goal, 'hang').then(
      () => assert.fail('a hanging plan was answered'),
      () => undefined,
    );
  });
  const worker = async (): Promise<void> => {
    while (!killed) {
      const index = counter++;
      const kind = LOAD_KINDS[index % LOAD_KINDS.length] as Kind;
      const entry: Sent = { goal: `round ${round} request ${index}`, kind };
      sent.push(entry);
      try {
        const response = await postPlan(served.url, entry.goal, kind);
        const body = (await response.json()) as { id?: string; job?: { id: string } };
        entry.status = response.status;
        entry.jobId = body.job?.id ?? body.id;
        acknowledged++;
        acknowledgements.changed();
      } catch {
        return; // the server is gone
      }
    }
  };
  const workers = Array.from({ length: WORKERS }, worker);
  // Kill only once enough plans were answered and the hanging steps are recorded as running
  // (read from the server), while the workers keep posting.
  await acknowledgements.until(() => acknowledged >= ACKED_PER_ROUND, {
    timeoutMs: 120_000,
    what: () => `${ACKED_PER_ROUND} answered plans (${acknowledged} so far)`,
  });
  await waitFor(
    async () => {
      const executing = await getJson<Job[]>(`${served.url}/api/jobs?status=executing&limit=1000`);
      const running = executing.filter(
        (job) => job.goal.startsWith(`round ${round} hang `) && job.steps[1]?.status === 'running',
      );
      return running.length === HANGING_PER_ROUND;
    },
    { timeoutMs: 60_000, intervalMs: 25, what: 'the hanging steps recorded as running' },
  );
  served.child.kill('SIGKILL');
  const [, signal] = await once(served.child, 'exit');
  killed = true;
  assert.equal(signal, 'SIGKILL');
  await Promise.all([...workers, ...hanging]);
  assert.ok(
    sent.some((entry) => entry.kind !== 'hang' && entry.status === undefined),
    'the kill cut off requests in flight',
  );
  return sent;
}

function integrityCheck(): string {
  const db = new Database(file);
  try {
    return db.pragma('integrity_check', { simple: true }) as string;
  } finally {
    db.close();
  }
}

function count(job: Job, type: string): number {
  return job.events.filter((event) => event.type === type).length;
}

/** A job the crash cut off: completed steps, then at most one running, then pending ones. */
function assertCutOff(job: Job): void {
  const statuses = job.steps.map((step: JobStep) => step.status);
  const done = statuses.filter((status) => status === 'completed').length;
  const rest = statuses.slice(done);
  assert.ok(
    statuses.slice(0, done).every((status) => status === 'completed') &&
      (rest[0] === 'running' || rest[0] === 'pending' || rest[0] === undefined) &&
      rest.slice(1).every((status) => status === 'pending'),
    `${job.goal}: ${statuses.join(', ')}`,
  );
  const running = rest[0] === 'running' ? 1 : 0;
  if (job.status === 'created') {
    assert.equal(done + running, 0);
    assert.deepEqual(
      job.events.map((event) => event.type),
      ['job.created'],
    );
    return;
  }
  assert.equal(job.status, 'executing', job.goal);
  assert.equal(job.completedAt, undefined);
  // Each transition is one transaction: the events agree with the steps.
  assert.equal(count(job, 'capability.started'), done + running, job.goal);
  assert.equal(count(job, 'capability.completed'), done, job.goal);
  assert.equal(count(job, 'job.completed') + count(job, 'job.failed'), 0);
  if (running === 1) {
    assert.equal(job.events.at(-1)?.type, 'capability.started');
    assert.equal(typeof job.steps[done]?.startedAt, 'string');
    assert.equal(job.steps[done]?.completedAt, undefined);
  }
}

function assertFinishedAs(job: Job | undefined, kind: Kind, goal: string): void {
  const recorded = PLANS[kind].recorded;
  assert.ok(job !== undefined && recorded !== undefined, `${goal} is recorded`);
  assert.equal(job.status, recorded.status, goal);
  assert.deepEqual(
    job.steps.map((step) => step.status),
    recorded.steps,
    goal,
  );
  assert.equal(job.events.at(-1)?.type, `job.${recorded.status}`, goal);
  assert.equal(typeof job.completedAt, 'string');
  if (kind === 'ok') assert.deepEqual(job.steps[1]?.result, { done: { from: { n: 1 } } });
}

describe(`warrant serve on SQLite, SIGKILLed under load and restarted (${ROUNDS} round${ROUNDS === 1 ? '' : 's'})`, () => {
  it(
    'keeps every acknowledged job finished as answered, shows cut-off jobs as they were, and passes integrity_check',
    { timeout: SOAK ? 600_000 : 120_000 },
    async () => {
      const sent: Sent[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const served = await serve();
        sent.push(...(await loadAndKill(served, round)));
        assert.equal(integrityCheck(), 'ok', `after kill ${round}`);
      }

      // The jobs as the kill left them, before a server takes them up.
      const jobs = await jobsOnDisk();
      const restarted = await serve();
      assert.equal(new Set(jobs.map((job) => job.id)).size, jobs.length);
      const byGoal = new Map<string, Job>();
      for (const job of jobs) {
        assert.equal(byGoal.has(job.goal), false, `${job.goal} recorded twice`);
        byGoal.set(job.goal, job);
      }
      const sentGoals = new Set(sent.map((entry) => entry.goal));
      assert.deepEqual(
        jobs.filter((job) => !sentGoals.has(job.goal)).map((job) => job.goal),
        [],
        'no job nobody sent',
      );

      let acknowledged = 0;
      for (const entry of sent) {
        const job = byGoal.get(entry.goal);
        if (entry.status === undefined) {
          // Cut off by the kill: not recorded yet, finished just before it, or cut off mid-run.
          if (job !== undefined && job.status !== 'completed' && job.status !== 'failed')
            assertCutOff(job);
          else if (job !== undefined) assertFinishedAs(job, entry.kind, entry.goal);
          continue;
        }
        assert.equal(entry.status, PLANS[entry.kind].status, entry.goal);
        if (entry.kind === 'refused') {
          assert.equal(job, undefined, `${entry.goal}: a refused plan leaves no job`);
          continue;
        }
        acknowledged++;
        assert.equal(job?.id, entry.jobId, entry.goal);
        const stored = await getJson<Job>(`${restarted.url}/api/jobs/${entry.jobId as string}`);
        assertFinishedAs(stored, entry.kind, entry.goal);
      }
      assert.ok(acknowledged >= ROUNDS * ACKED_PER_ROUND * 0.5);

      // The steps that hung were cut off mid-step...
      for (let round = 1; round <= ROUNDS; round++) {
        for (let index = 0; index < HANGING_PER_ROUND; index++) {
          const goal = `round ${round} hang ${index}`;
          const job = jobs.find((candidate) => candidate.goal === goal);
          assert.ok(job !== undefined && job.status === 'executing', `${goal} was executing`);
          assert.deepEqual(
            job.steps.map((step) => step.status),
            ['completed', 'running', 'pending'],
          );
          assertCutOff(job);
        }
      }
      for (const job of jobs) {
        if (job.status === 'created' || job.status === 'executing') assertCutOff(job);
      }

      // ...and the restarted server took them up, through the API a user has: a step that may
      // have run is interrupted, never run again, and its job fails with STEP_INTERRUPTED.
      for (let round = 1; round <= ROUNDS; round++) {
        for (let index = 0; index < HANGING_PER_ROUND; index++) {
          const goal = `round ${round} hang ${index}`;
          const [job] = await getJson<Job[]>(
            `${restarted.url}/api/jobs?goal=${encodeURIComponent(goal)}`,
          );
          assert.equal(job?.status, 'failed', goal);
          assert.match(job?.error ?? '', /^STEP_INTERRUPTED: /);
          assert.deepEqual(
            job?.steps.map((step) => step.status),
            ['completed', 'interrupted', 'skipped'],
          );
        }
      }

      // The restarted server runs new plans, and leaves no cut-off job executing (bounded wait).
      const fresh = await postPlan(restarted.url, 'after restart', 'ok');
      assert.equal(fresh.status, 201);
      let left: Job[] = [];
      await waitFor(
        async () => {
          left = await getJson<Job[]>(`${restarted.url}/api/jobs?status=executing&limit=1000`);
          return left.length === 0;
        },
        {
          timeoutMs: 30_000,
          intervalMs: 100,
          what: () => `no job executing (${left.map((job) => job.goal).join(', ')})`,
        },
      );

      restarted.child.kill('SIGTERM');
      const [code] = await once(restarted.child, 'exit');
      assert.equal(code, 0, restarted.stderr());
      assert.equal(integrityCheck(), 'ok', 'after a graceful stop');
    },
  );
});
