// Headless Chromium for the console tests, through playwright-core: Debian's `chromium` package
// (installed by .ci/run), or the browser named by WARRANT_CHROMIUM. No browser is a failure with
// the way to install one, never a skip (CONTRIBUTING.md, "The console tests").
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The browser to drive, or an Error that says how to get one. */
export function chromiumPath(): string {
  const named = process.env.WARRANT_CHROMIUM;
  if (named !== undefined && named !== '') {
    if (existsSync(named)) return named;
    throw new Error(`WARRANT_CHROMIUM=${named} does not exist`);
  }
  const found = CANDIDATES.find((path) => existsSync(path));
  if (found !== undefined) return found;
  throw new Error(
    'The console tests need Chromium and found none at ' +
      `${CANDIDATES.join(', ')}. Install it (Debian/Ubuntu: sudo apt-get install -y chromium; ` +
      '.ci/run does this on CI) or set WARRANT_CHROMIUM to a Chromium or Chrome binary.',
  );
}

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh headless browser with its own temporary profile, for a closed network. */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'warrant-console-browser-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath(),
      headless: true,
      timeout: 60_000,
      viewport: { width: 1280, height: 800 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context.setDefaultTimeout(15_000);
    return {
      context,
      close: async () => {
        await context.close().catch(() => {});
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}
