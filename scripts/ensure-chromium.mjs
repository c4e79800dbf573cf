// Part of `npm test` (its pretest, CONTRIBUTING.md, "The console tests"): the console tests drive a
// real Chromium (test/console/browser.ts). When none is found and WARRANT_CHROMIUM names none,
// Debian's `chromium` is installed with apt-get when this runs as root on a machine that has
// apt-get; otherwise one line says how to get one, and the tests go on (the console tests then fail
// with the same advice). Never fails `npm test` by itself.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const HOW =
  'the console tests need Chromium: `sudo apt-get install chromium` (Debian, Ubuntu), or set WARRANT_CHROMIUM to a Chromium or Chrome binary';

function found() {
  const named = process.env.WARRANT_CHROMIUM;
  if (named !== undefined && named !== '') return existsSync(named);
  return CANDIDATES.some((path) => existsSync(path));
}

function hasAptGet() {
  return spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
}

const named = process.env.WARRANT_CHROMIUM;
if (named !== undefined && named !== '' && !existsSync(named)) {
  process.stderr.write(`pretest: WARRANT_CHROMIUM=${named} does not exist; ${HOW}\n`);
} else if (!found()) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root && hasAptGet()) {
    process.stderr.write('pretest: installing Debian chromium for the console tests (apt-get)\n');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
    const install =
      update.status === 0 &&
      spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'ignore', env })
        .status === 0;
    if (!install || !found()) process.stderr.write(`pretest: apt-get failed; ${HOW}\n`);
  } else {
    process.stderr.write(`pretest: no Chromium found; ${HOW}\n`);
  }
}
