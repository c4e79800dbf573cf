// `warrant serve` as a real child process (the built program, dist/esm/cli/main.js), and the
// two clients the tests talk to it with: fetch for the HTTP routes and the MCP SDK's client over
// Streamable HTTP for /mcp. Every wait is bounded; every child is killed at the end of the file.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import { after } from 'node:test';
import {
  Client,
  StreamableHTTPClientTransport,
  type CallToolResult,
} from '@modelcontextprotocol/client';
import { Output } from './wait.js';

const MAIN = resolve(import.meta.dirname, '../../dist/esm/cli/main.js');
const children: ChildProcessWithoutNullStreams[] = [];
const clients: Client[] = [];
after(async () => {
  for (const client of clients) await client.close().catch(() => {});
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

export interface Served {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves with the address printed on "listening on", or rejects when the child exits. */
  readonly listening: Promise<string>;
  readonly exited: Promise<number | null>;
  stderr(): string;
  /** The child's stderr as it arrives (bounded waits for a line: `stderrMatches`). */
  readonly output: Output;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

const LISTENING = /listening on (http:\/\/\S+)/;

/**
 * Starts the built program with `argv` (`['serve', ...]`); WARRANT_TOKEN and WARRANT_JWT_SECRET
 * are unset unless `env` sets them.
 */
export function spawnServe(argv: string[], env: Record<string, string | undefined> = {}): Served {
  const child = spawn(process.execPath, [MAIN, ...argv], {
    env: { ...process.env, WARRANT_TOKEN: undefined, WARRANT_JWT_SECRET: undefined, ...env },
  });
  children.push(child);
  const output = new Output(child.stderr);
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const listening = output
    .match(LISTENING, { timeoutMs: 30_000, what: 'the address it listens on' })
    .then(
      (text) => (LISTENING.exec(text) as RegExpExecArray)[1] as string,
      async (error: unknown) => {
        // Its stderr ended without an address: rejected once it has exited, with its code.
        if (!output.ended) throw error;
        throw new Error(`exited ${await exited}: ${output.text}`);
      },
    );
  listening.catch(() => {});
  return {
    child,
    listening,
    exited,
    output,
    stderr: () => output.text,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Starts `warrant serve --port 0 --store memory <args>`; WARRANT_TOKEN and
 * WARRANT_JWT_SECRET are unset unless `env` sets them. */
export function serveChild(args: string[], env: Record<string, string | undefined> = {}): Served {
  return spawnServe(['serve', '--port', '0', '--store', 'memory', ...args], env);
}

/** Starts `warrant serve <args>` expecting it to stop before listening; its code and stderr. */
export async function serveFails(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stderr: string }> {
  const served = serveChild(args, env);
  const outcome = await Promise.race([served.exited, served.listening.then(() => 'listening')]);
  if (outcome === 'listening') {
    await served.stop();
    assert.fail(`warrant serve ${args.join(' ')} started: ${served.stderr()}`);
  }
  return { code: outcome as number | null, stderr: served.stderr() };
}

/** Resolves with the child's stderr once it matches, as the line arrives (bounded: 20 s). */
export function stderrMatches(served: Served, pattern: RegExp): Promise<string> {
  return served.output.match(pattern, { what: `stderr matching ${String(pattern)}` });
}

export interface Answer {
  readonly status: number;
  readonly challenge: string | null;
  readonly json: Record<string, unknown> & { error?: string };
}

/** One HTTP request with an optional bearer token (or a whole Authorization value). */
export async function call(
  address: string,
  method: string,
  path: string,
  options: {
    token?: string;
    authorization?: string;
    body?: unknown;
    headers?: Record<string, string>;
  } = {},
): Promise<Answer> {
  const authorization =
    options.authorization ?? (options.token === undefined ? undefined : `Bearer ${options.token}`);
  const response = await fetch(`${address}${path}`, {
    method,
    headers: {
      ...(options.body !== undefined && { 'content-type': 'application/json' }),
      ...(authorization !== undefined && { authorization }),
      ...options.headers,
    },
    ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    json: (text === '' ? {} : JSON.parse(text)) as Answer['json'],
  };
}

/** The jobs the server recorded (asked with working credentials). */
export async function jobsOf(
  address: string,
  credentials: { token?: string; headers?: Record<string, string> } = {},
): Promise<unknown[]> {
  const answer = await call(address, 'GET', '/api/jobs', credentials);
  assert.equal(answer.status, 200, JSON.stringify(answer.json));
  return answer.json as unknown as unknown[];
}

/** A real MCP client connected to `<address>/mcp`, with `Authorization: Bearer <token>`. */
export async function mcpClient(
  address: string,
  token?: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${address}/mcp`), {
    requestInit: {
      headers: { ...headers, ...(token !== undefined && { authorization: `Bearer ${token}` }) },
    },
  });
  const client = new Client({ name: 'warrant-serve-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

export function textOf(result: CallToolResult): string {
  const [block] = result.content;
  return block?.type === 'text' ? block.text : '';
}
