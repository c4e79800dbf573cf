// docs/api.md, "Recovery" and "runtime.storeAvailability"; docs/decisions.md, "A lost owner lock": `warrant
// serve` (the built program) on PostgreSQL when the connection holding its owner lock ends.
//
// - Two servers on one database, 16 plans in flight, every connection of theirs (the owner locks'
//   included) terminated 4 times with pg_terminate_backend: no answer is a 500, each 503 carries
//   Retry-After, both servers answer 2xx again after each termination, every job recorded ends
//   (the jobs of a lost owner are taken up by the recovery rule, by its own server or the other),
//   no step ran twice (a ledger the capabilities append to, outside Warrant) and every job's
//   record verifies.
// - One server whose database cannot be reached (a relay in front of PostgreSQL cuts every
//   connection and refuses new ones): GET /health answers 503 with its reason, POST /api/plans
//   503 with Retry-After; once the database answers again, 200 and 201.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { OperatorRuntime } from '../../src/index.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { serveChild, type Served } from '../support/serve-child.js';
import { Changes, waitFor } from '../support/wait.js';

const MODULE = resolve(import.meta.dirname, '../runtime/fixtures/recovery-capabilities.ts');
const AUTHORIZER = resolve(import.meta.dirname, '../runtime/fixtures/recovery-authorizer.mjs');
const directory = mkdtempSync(join(tmpdir(), 'warrant-serve-owner-'));
after(() => rmSync(directory, { recursive: true, force: true }));

let postgres: TestPostgres | undefined;
before(async () => {
  postgres = await startTestPostgres();
});
after(async () => {
  await postgres?.stop();
});

interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly json: Record<string, unknown>;
}

async function request(
  address: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${address}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    json: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>,
  } satisfies Answer;
}

/** A plan of 3 steps that each append a line to the ledger and take 20 ms. */
function plan(n: number) {
  return {
    version: '1.0',
    goal: `owner ${n}`,
    steps: ['s1', 's2', 's3'].map((id) => ({
      id,
      capability: 'recovery.append',
      input: { ms: 20 },
    })),
  };
}

/** Terminates every other session on the database; resolves how many, and how many held a lock. */
async function terminateAll(admin: pg.Client): Promise<{ sessions: number; owners: number }> {
  const { rows } = await admin.query<{ sessions: number; owners: number }>(
    `SELECT count(*)::int AS sessions, count(*) FILTER (WHERE a.owner)::int AS owners FROM (
       SELECT EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = s.pid AND l.locktype = 'advisory') AS owner,
         pg_terminate_backend(s.pid) AS done
       FROM pg_stat_activity s
       WHERE s.datname = current_database() AND s.pid <> pg_backend_pid()) a
     WHERE a.done`,
  );
  return rows[0] ?? { sessions: 0, owners: 0 };
}

describe('warrant serve on PostgreSQL when its owner lock is lost', () => {
  it('two servers under load, every connection terminated 4 times: no 500, both answer again, every job ends, no step twice', async () => {
    const url = await (postgres as TestPostgres).createDatabase();
    const ledger = join(directory, 'ledger-load.txt');
    writeFileSync(ledger, '');
    const args = ['--store', url, '--module', MODULE, '--authorizer', AUTHORIZER];
    const servers: Served[] = [];
    const admin = new pg.Client({ connectionString: url });
    let reader: OperatorRuntime | undefined;
    try {
      // One after the other: the first creates the schema.
      for (let n = 0; n < 2; n++) {
        const served = serveChild(args, { WARRANT_TEST_LEDGER: ledger });
        servers.push(served);
        await served.listening;
      }
      const addresses = await Promise.all(servers.map((served) => served.listening));
      const stderr = () => servers.map((served, n) => `server ${n}: ${served.stderr()}`).join('\n');
      await admin.connect();

      /** Resolves once the job is neither queued nor executing (read from the database). */
      const ended = async (jobId: string): Promise<void> => {
        await waitFor(
          async () => {
            const { rows } = await admin.query<{ status: string }>(
              'SELECT status FROM warrant_jobs WHERE id = $1',
              [jobId],
            );
            return !['queued', 'executing'].includes(rows[0]?.status ?? 'queued');
          },
          { timeoutMs: 30_000, intervalMs: 50, what: () => `job ${jobId} to end: ${stderr()}` },
        );
      };

      // 16 clients, each sending one plan after another to the two servers in turn: 12 wait for
      // the job in the request, 4 have it queued (Prefer: respond-async) and wait for its end.
      const unexpected: string[] = [];
      const acknowledged = new Set<string>();
      const served2xx = [0, 0];
      const answered = new Changes();
      let stop = false;
      let sent = 0;
      const client = async (first: number) => {
        const queued = first % 4 === 3;
        for (let turn = first; !stop; turn++) {
          const server = turn % 2;
          let answer: Answer;
          try {
            answer = await request(
              addresses[server] as string,
              'POST',
              '/api/plans',
              plan(sent++),
              queued ? { prefer: 'respond-async' } : {},
            );
          } catch (error) {
            unexpected.push(`server ${server}: ${String(error)}`);
            continue;
          }
          const jobId = answer.json.id ?? answer.json.jobId;
          if (typeof jobId === 'string') acknowledged.add(jobId);
          if (
            (answer.status === 201 && answer.json.status === 'completed') ||
            (queued && answer.status === 202)
          )
            served2xx[server] = (served2xx[server] as number) + 1;
          else if (answer.status !== 503 || answer.retryAfter === null)
            unexpected.push(`server ${server}: ${answer.status} ${JSON.stringify(answer.json)}`);
          answered.changed();
          if (queued && answer.status === 202) await ended(jobId as string);
        }
      };
      const clients = Array.from({ length: 16 }, (_, n) => client(n));
      try {
        // Both servers have written (each holds its owner lock) before the first termination.
        await answered.until(() => served2xx.every((count) => count > 0), {
          what: () => `a 2xx from each server: ${stderr()}`,
        });
        let owners = 0;
        for (let round = 1; round <= 4; round++) {
          const terminated = await terminateAll(admin);
          assert.ok(terminated.owners > 0, `round ${round}: no owner lock session terminated`);
          owners += terminated.owners;
          // Each server answers 2xx again: the store took a new owner and goes on.
          const before = [...served2xx];
          await answered.until(
            () => served2xx.every((count, n) => count >= (before[n] as number) + 4),
            {
              what: () =>
                `round ${round}: 2xx again from each server (${served2xx.join(', ')}; ${unexpected.slice(0, 3).join(' | ')}): ${stderr()}`,
            },
          );
        }
        assert.ok(owners >= 5, `only ${owners} owner lock sessions terminated`);
      } finally {
        stop = true;
        await Promise.all(clients);
      }
      assert.deepEqual(unexpected, [], stderr());

      // Every job recorded ends, those of the lost owners too (taken up by a live server).
      await waitFor(
        async () => {
          const { rows } = await admin.query<{ open: number }>(
            "SELECT count(*)::int AS open FROM warrant_jobs WHERE status IN ('queued', 'executing')",
          );
          return rows[0]?.open === 0;
        },
        {
          // Bounded, not timed: the last jobs are taken up by a live server's once-a-second look
          // after the terminations settle, which a loaded machine stretched past 30 s once.
          timeoutMs: 60_000,
          intervalMs: 50,
          what: () => `no job queued or executing: ${stderr()}`,
        },
      );
      const { rows: jobs } = await admin.query<{ id: string; status: string }>(
        'SELECT id, status FROM warrant_jobs',
      );
      const recorded = new Map(jobs.map((job) => [job.id, job.status]));
      for (const id of acknowledged)
        assert.ok(recorded.has(id), `acknowledged job ${id} not recorded`);
      // Some were cut off and taken up by the recovery rule.
      const { rows: recoveredRows } = await admin.query<{ n: number }>(
        `SELECT count(DISTINCT e.job_seq)::int AS n FROM warrant_job_events e
         WHERE e.event LIKE '%"job.recovered"%'`,
      );
      assert.ok((recoveredRows[0]?.n ?? 0) > 0, 'no job was recovered');

      // No step ran twice.
      const runs = readFileSync(ledger, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('run '));
      const seen = new Set<string>();
      for (const line of runs) {
        assert.ok(!seen.has(line), `a step ran twice: ${line}`);
        seen.add(line);
      }
      // Every record verifies (job.recovered and step.interrupted included).
      reader = new OperatorRuntime({ store: url });
      for (const id of recorded.keys())
        assert.equal((await reader.verifyJob(id))?.ok, true, `job ${id} does not verify`);
      for (const address of addresses)
        assert.deepEqual((await request(address, 'GET', '/health')).json, { status: 'ok' });
      assert.doesNotMatch(stderr(), /internal error/);
    } finally {
      await reader?.close();
      await admin.end().catch(() => {});
      for (const served of servers) await served.stop();
    }
  });

  it('the database unreachable: /health and POST /api/plans answer 503 with Retry-After, then 200 and 201', async () => {
    const url = new URL(await (postgres as TestPostgres).createDatabase());
    const relay = await cuttingRelay({ host: url.hostname, port: Number(url.port) });
    const viaRelay = new URL(url);
    viaRelay.port = String(relay.port);
    const ledger = join(directory, 'ledger-unreachable.txt');
    writeFileSync(ledger, '');
    const served = serveChild(
      ['--store', viaRelay.toString(), '--module', MODULE, '--authorizer', AUTHORIZER],
      { WARRANT_TEST_LEDGER: ledger },
    );
    try {
      const address = await served.listening;
      const first = await request(address, 'POST', '/api/plans', plan(1));
      assert.equal(first.status, 201, JSON.stringify(first.json));
      assert.deepEqual(await request(address, 'GET', '/health'), {
        status: 200,
        retryAfter: null,
        json: { status: 'ok' },
      });

      relay.cut();
      let health: Answer | undefined;
      await waitFor(
        async () => {
          health = await request(address, 'GET', '/health');
          return health.status === 503;
        },
        { intervalMs: 50, what: () => `GET /health 503 (last ${JSON.stringify(health)})` },
      );
      const down = health as Answer;
      assert.equal(down.retryAfter, '5');
      assert.equal(down.json.status, 'unavailable');
      assert.equal(down.json.code, 'STORE_UNAVAILABLE');
      assert.equal(typeof down.json.reason, 'string');
      // Nothing about the database: no password, user, host or port.
      const text = JSON.stringify(down.json);
      for (const secret of [url.password, url.username, url.port, String(relay.port)])
        assert.ok(!text.includes(secret), text);

      const refused = await request(address, 'POST', '/api/plans', plan(2));
      assert.equal(refused.status, 503, JSON.stringify(refused.json));
      assert.equal(refused.retryAfter, '5');
      assert.equal(refused.json.code, 'STORE_UNAVAILABLE');
      const read = await request(address, 'GET', '/api/jobs');
      assert.equal(read.status, 503, JSON.stringify(read.json));
      assert.equal(read.retryAfter, '5');

      relay.restore();
      await waitFor(
        async () => {
          health = await request(address, 'GET', '/health');
          return health.status === 200;
        },
        { intervalMs: 50, what: () => `GET /health 200 again: ${served.stderr()}` },
      );
      assert.deepEqual(health?.json, { status: 'ok' });
      const again = await request(address, 'POST', '/api/plans', plan(3));
      assert.equal(again.status, 201, JSON.stringify(again.json));
      assert.equal(again.json.status, 'completed');
      assert.doesNotMatch(served.stderr(), /internal error/);
      assert.ok(!served.stderr().includes(url.password));
    } finally {
      await served.stop();
      await relay.close();
    }
  });
});

/**
 * A TCP relay in front of PostgreSQL: `cut()` ends every connection through it and ends each new
 * one at once (a database that cannot be reached), `restore()` relays again.
 */
async function cuttingRelay(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    client.on('error', () => {});
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    upstream.on('error', () => {});
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    port,
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      cut = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
