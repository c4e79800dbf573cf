/**
 * The audit console of `warrant serve` (docs/guide/http.md, "Audit console", SECURITY.md): three
 * static files, an HTML page at `/`, its script and its style sheet. They hold no recorded data:
 * the page asks the JSON API for everything it shows, with the bearer header when it has a token,
 * so the files are served without credentials (`isOpenRoute` in `request-gate.ts`) while every API
 * route still needs them. Each answer carries a strict Content-Security-Policy: no inline script or
 * style, no other origin, no framing.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

/** The console's files: route, file next to this module, content type. */
const FILES = [
  { route: '/', file: 'index.html', type: 'text/html; charset=utf-8' },
  { route: '/console/app.js', file: 'app.js', type: 'text/javascript; charset=utf-8' },
  { route: '/console/app.css', file: 'app.css', type: 'text/css; charset=utf-8' },
] as const;

/** The routes of the console's static files: open without credentials (they hold no data). */
export const CONSOLE_ROUTES: readonly string[] = Object.freeze(FILES.map(({ route }) => route));

/** The Content-Security-Policy of every console answer. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
});

/** Reads a console file; a build that lost it fails here, with the file's name. */
function readConsoleFile(file: string): Buffer {
  const url = new URL(file, import.meta.url);
  try {
    return readFileSync(url);
  } catch {
    throw new Error(`the console file ${file} is missing next to ${new URL('.', url).pathname}`);
  }
}

/** Registers `GET /` and the console's script and style sheet (read once, kept in memory). */
export function registerConsole(app: FastifyInstance): void {
  for (const { route, file, type } of FILES) {
    const body = readConsoleFile(file);
    app.get(route, async (_request, reply) => reply.headers(HEADERS).type(type).send(body));
  }
}
