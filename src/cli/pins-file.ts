/**
 * The pins file (docs/api.md, "Pinned tools"): the definition digest each tool of each
 * `--mcp-server` must have, by server name then tool name, written by `warrant mcp pin` and read
 * with `--pins <file>`:
 *
 *   { "version": 1, "servers": { "<server name>": { "<tool>": "sha256:<64 hex>" } } }
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseJson } from '../json/parse-json.js';
import { firstLine, UsageError } from './usage-error.js';

/** Where `warrant mcp pin` writes when `--pins` is not given. */
export const DEFAULT_PINS_FILE = 'warrant.pins.json';

/** The largest pins file read. */
const MAX_PINS_FILE = 1024 * 1024;

const SERVER_NAME = /^[A-Za-z0-9_-]+$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** Server name → tool name → digest. */
export type Pins = ReadonlyMap<string, ReadonlyMap<string, string>>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The pins of a file's text; throws a one-line reason for anything else. */
export function parsePins(text: string): Pins {
  const value = parseJson(text);
  if (!isObject(value) || value.version !== 1 || !isObject(value.servers))
    throw new Error(
      'expected { "version": 1, "servers": { "<server>": { "<tool>": "sha256:..." } } }',
    );
  const pins = new Map<string, Map<string, string>>();
  for (const [server, tools] of Object.entries(value.servers)) {
    if (!SERVER_NAME.test(server))
      throw new Error(`the server name ${JSON.stringify(server)} is not one --mcp-server accepts`);
    if (!isObject(tools)) throw new Error(`servers.${server} must map tool names to digests`);
    const digests = new Map<string, string>();
    for (const [tool, digest] of Object.entries(tools)) {
      if (typeof digest !== 'string' || !DIGEST.test(digest))
        throw new Error(`servers.${server}.${tool} must be a digest sha256:<64 lowercase hex>`);
      digests.set(tool, digest);
    }
    pins.set(server, digests);
  }
  return pins;
}

/** `--pins <file>`: its pins; a usage error (exit 2) naming the file when it cannot be read. */
export function readPinsFile(file: string): Pins {
  let text: string;
  try {
    if (statSync(file).size > MAX_PINS_FILE) throw new Error(`larger than ${MAX_PINS_FILE} bytes`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--pins ${file}: cannot read it (${firstLine(error)})`);
  }
  try {
    return parsePins(text);
  } catch (error) {
    throw new UsageError(`--pins ${file}: not a pins file (${firstLine(error)})`);
  }
}

/** The file's text: servers and tools in name order, so that a change reads as one in a diff. */
export function pinsText(pins: Pins): string {
  const servers: Record<string, Record<string, string>> = {};
  for (const server of [...pins.keys()].sort()) {
    const tools = pins.get(server) as ReadonlyMap<string, string>;
    servers[server] = Object.fromEntries([...tools].sort(([a], [b]) => (a < b ? -1 : 1)));
  }
  return `${JSON.stringify({ version: 1, servers }, null, 2)}\n`;
}

/** Writes `pins` to `file` whole or not at all (a new file renamed over it). */
export function writePinsFile(file: string, pins: Pins): void {
  const temporary = join(dirname(file), `.${basename(file)}.${randomUUID()}.tmp`);
  try {
    writeFileSync(temporary, pinsText(pins), { flag: 'wx' });
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new UsageError(`--pins ${file}: cannot write it (${firstLine(error)})`);
  }
}
