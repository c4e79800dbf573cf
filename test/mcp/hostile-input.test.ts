// Hostile MCP input (issue 9) over the real stdio framing: raw lines written to `warrant mcp`
// running as a child process (src/cli/main.ts through tsx, on a SQLite store), and the same
// lines written in-process to McpAdapter served by serveStdio over the program's stdio
// transport, so that prototype pollution can be checked in this very process. Malformed
// JSON-RPC, wrong argument types, 10,000-deep nesting, `__proto__` / `constructor` / `prototype`
// keys, invalid UTF-8, huge messages, unknown methods and tools: each is answered with a
// JSON-RPC error or a tool error, never a stack trace, and the next request is served.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { StdioLineTransport } from '../../src/cli/stdio-transport.js';
import { SqliteJobStore } from '../../src/stores/sqlite/sqlite-store.js';
import { McpAdapter, OperatorRuntime } from '../../src/index.js';
import hostileModule from './fixtures/hostile-capabilities.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MODULE = resolve(ROOT, 'test/mcp/fixtures/hostile-capabilities.ts');
const LIMIT = 10 * 1024 * 1024;

interface Answer {
  jsonrpc: '2.0';
  id?: string | number | null;
  result?: {
    content?: { type: string; text: string }[];
    structuredContent?: Record<string, unknown>;
    isError?: boolean;
  };
  error?: { code: number; message: string };
}

/** One MCP server reached through raw bytes: what a hostile client can write. */
interface Session {
  write(data: string | Buffer): void;
  /** The next message the server writes (every line of its output must be JSON-RPC 2.0). */
  next(): Promise<Answer>;
  close(): Promise<void>;
}

/** Reads newline-delimited JSON-RPC from `output`, asserting every line is a JSON-RPC message. */
function reader(output: NodeJS.ReadableStream): () => Promise<Answer> {
  const queue: Answer[] = [];
  const waiting: ((answer: Answer) => void)[] = [];
  let buffer = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline !== -1) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      const answer = JSON.parse(line) as Answer;
      assert.equal(answer.jsonrpc, '2.0', `not JSON-RPC on the output: ${line.slice(0, 200)}`);
      const waiter = waiting.shift();
      if (waiter) waiter(answer);
      else queue.push(answer);
      newline = buffer.indexOf('\n');
    }
  });
  return () => {
    const queued = queue.shift();
    return queued ? Promise.resolve(queued) : new Promise((done) => waiting.push(done));
  };
}

let nextId = 1;

async function request(session: Session, method: string, params?: unknown): Promise<Answer> {
  const id = nextId++;
  session.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  const answer = await session.next();
  assert.equal(answer.id, id, `the answer to request ${id}`);
  return answer;
}

async function initialize(session: Session): Promise<void> {
  const answer = await request(session, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'hostile-client', version: '1.0.0' },
  });
  assert.equal(answer.error, undefined);
  session.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
}

function assertNoStack(answer: Answer): void {
  const text = [answer.error?.message, ...(answer.result?.content ?? []).map((c) => c.text)].join(
    '\n',
  );
  assert.doesNotMatch(text, /\n\s+at |node:internal|\.ts:\d+|\.js:\d+/);
}

function textOf(answer: Answer): string {
  const [block] = answer.result?.content ?? [];
  assert.equal(block?.type, 'text');
  return (block as { text: string }).text;
}

function hostileSuite(label: string, open: () => Promise<Session>, inProcess: boolean): void {
  // A request left unanswered fails the suite at this deadline instead of hanging it.
  describe(label, { timeout: 60_000 }, () => {
    let session: Session;
    /** The tools that ran (a job exists for each), in order. */
    const ran: string[] = [];
    before(async () => {
      session = await open();
      await initialize(session);
    });
    after(async () => session.close());

    async function call(name: string, args: unknown): Promise<Answer> {
      const answer = await request(session, 'tools/call', { name, arguments: args });
      assertNoStack(answer);
      const refused =
        answer.result?.isError === true && /^Execution plan failed/.test(textOf(answer));
      if (answer.result !== undefined && !refused) ran.push(name);
      return answer;
    }

    /** A request after a hostile one: the server still serves. */
    async function assertServing(): Promise<void> {
      const answer = await call('hostile_text', { text: 'still here' });
      assert.deepEqual(answer.result?.structuredContent, { text: 'still here', length: 10 });
    }

    async function assertRefused(line: string | Buffer, code: number, id: unknown = null) {
      session.write(line);
      const answer = await session.next();
      assert.equal(answer.id, id);
      assert.equal(answer.error?.code, code, JSON.stringify(answer));
      assertNoStack(answer);
      await assertServing();
    }

    it('answers a line that is not JSON with -32700 (id null) and serves the next request', async () => {
      for (const line of [
        '{not json\n',
        '{"jsonrpc":"2.0","id":1,\n',
        ']\n',
        'tools/list\n',
        '\u0000\u0001\u0002\n',
        Buffer.from([0xff, 0xfe, 0x0a]),
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}{"jsonrpc":"2.0"}\n',
      ]) {
        await assertRefused(line, -32700);
      }
    });

    it('answers JSON that is not a JSON-RPC message with -32600, with its id when it has one', async () => {
      const refused: [string, unknown][] = [
        ['[1,2,3]', null],
        ['"just a string"', null],
        ['42', null],
        ['null', null],
        ['{}', null],
        ['{"jsonrpc":"1.0","id":7,"method":"tools/list"}', 7],
        ['{"id":"no-version","method":"tools/list"}', 'no-version'],
        ['{"jsonrpc":"2.0","id":8,"method":42}', 8],
        ['{"jsonrpc":"2.0","id":{"nested":1},"method":"tools/list"}', null],
        ['[{"jsonrpc":"2.0","id":9,"method":"tools/list"}]', null],
        ['{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"a string"}', 10],
      ];
      for (const [line, id] of refused) await assertRefused(`${line}\n`, -32600, id);
    });

    it('answers unknown methods with -32601 and unknown tools with -32602', async () => {
      const method = await request(session, 'warrant/nothing', {});
      assert.equal(method.error?.code, -32601);
      const tool = await request(session, 'tools/call', { name: 'no.such.tool', arguments: {} });
      assert.equal(tool.error?.code, -32602);
      assert.match(String(tool.error?.message), /no\.such\.tool/);
      for (const answer of [method, tool]) assertNoStack(answer);
      await assertServing();
    });

    it('answers tool arguments of the wrong type with -32602, or with the admission message', async () => {
      for (const params of [
        { name: 'hostile_text', arguments: 'text' },
        { name: 'hostile_text', arguments: ['text'] },
        { name: 'hostile_text', arguments: 42 },
        { name: 42, arguments: {} },
        { arguments: { text: 'x' } },
      ]) {
        const answer = await request(session, 'tools/call', params);
        assert.equal(answer.error?.code, -32602, JSON.stringify(params));
        assertNoStack(answer);
      }
      for (const text of [5, true, null, {}, [], '']) {
        const answer = await call('hostile_text', { text });
        assert.equal(answer.result?.isError, true);
        assert.match(
          textOf(answer),
          /^Execution plan failed validation: steps\[0\] "call": input\.text/,
        );
      }
      await assertServing();
    });

    it('runs a tool whose arguments nest 10,000 levels deep', async () => {
      for (const nest of [
        `${'{"a":'.repeat(10_000)}"bottom"${'}'.repeat(10_000)}`,
        `${'['.repeat(10_000)}"bottom"${']'.repeat(10_000)}`,
      ]) {
        const id = nextId++;
        session.write(
          `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"hostile_depth","arguments":{"nest":${nest}}}}\n`,
        );
        const answer = await session.next();
        assert.equal(answer.id, id);
        assert.deepEqual(answer.result?.structuredContent, { depth: 10_000, leaf: 'bottom' });
        ran.push('hostile_depth');
      }
      await assertServing();
    });

    it('keeps __proto__, constructor and prototype keys as plain data: nothing is polluted', async () => {
      const lines: [string, (answer: Answer) => void][] = [
        [
          '{"name":"hostile_text","arguments":{"__proto__":{"polluted":true,"text":"inherited"}}}',
          (answer) => {
            // An own `__proto__` key is data: it lends no inherited `text` to the input.
            assert.equal(answer.result?.isError, true);
            assert.match(textOf(answer), /input\.text is required/);
          },
        ],
        [
          '{"name":"hostile_keys","arguments":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"prototype":{"polluted":true}}}',
          (answer) => {
            // The SDK drops a `__proto__` key of the arguments; the other two arrive as data, on
            // a plain object that inherits nothing from them.
            assert.deepEqual(answer.result?.structuredContent, {
              keys: ['constructor', 'prototype'],
              plainPrototype: true,
              inheritedPolluted: null,
            });
          },
        ],
        [
          '{"name":"hostile_text","arguments":{"text":"ok"},"__proto__":{"name":"hostile_pollution"}}',
          (answer) => {
            assert.deepEqual(answer.result?.structuredContent, { text: 'ok', length: 2 });
          },
        ],
      ];
      for (const [params, check] of lines) {
        const id = nextId++;
        session.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}\n`);
        const answer = await session.next();
        assert.equal(answer.id, id);
        assertNoStack(answer);
        check(answer);
        if (!(answer.result?.isError === true)) ran.push(JSON.parse(params).name as string);
      }
      await assertRefused(
        '{"__proto__":{"jsonrpc":"2.0","id":99,"method":"tools/list","polluted":true}}\n',
        -32600,
      );
      const id = nextId++;
      session.write(
        `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{"__proto__":{"polluted":true}}}\n`,
      );
      const listed = await session.next();
      assert.equal(listed.id, id);
      assert.ok(Array.isArray((listed.result as { tools?: unknown } | undefined)?.tools));
      await assertRefused(
        '{"jsonrpc":"2.0","id":"c","method":"tools/list","constructor":{"prototype":{"polluted":true}}}\n',
        -32600,
        'c',
      );
      const probe = await call('hostile_pollution', {});
      assert.deepEqual(probe.result?.structuredContent, { polluted: null, prototypeKeys: [] });
      if (inProcess) {
        assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
      }
    });

    it('decodes invalid UTF-8 inside strings as U+FFFD and runs the tool', async () => {
      for (const sequence of [[0x80], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff]]) {
        const id = nextId++;
        session.write(
          Buffer.concat([
            Buffer.from(
              `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"hostile_text","arguments":{"text":"a`,
            ),
            Buffer.from(sequence),
            Buffer.from('b"}}}\n'),
          ]),
        );
        const answer = await session.next();
        assert.equal(answer.id, id);
        const content = answer.result?.structuredContent as { text: string };
        assert.match(content.text, /^a\uFFFD+b$/);
        ran.push('hostile_text');
      }
      await assertServing();
    });

    it('serves a 5 MB message, answers -32600 for one over the 10 MiB line limit, and keeps serving', async () => {
      const big = await call('hostile_text', { text: 'x'.repeat(5_000_000) });
      assert.equal((big.result?.structuredContent as { length: number }).length, 5_000_000);
      const over = `{"jsonrpc":"2.0","id":${nextId++},"method":"tools/call","params":{"name":"hostile_text","arguments":{"text":"${'y'.repeat(LIMIT)}"}}}\n`;
      // Written in pieces, as a pipe delivers it: the line is dropped as it comes, never buffered.
      session.write(over.slice(0, 1000));
      await new Promise((done) => setImmediate(done));
      await assertRefused(over.slice(1000), -32600);
      // Several messages in one write, and one message across several writes.
      const first = nextId++;
      const second = nextId++;
      const pair = `${JSON.stringify({ jsonrpc: '2.0', id: first, method: 'tools/list' })}\n${JSON.stringify({ jsonrpc: '2.0', id: second, method: 'ping' })}\r\n`;
      session.write(pair.slice(0, 17));
      session.write(pair.slice(17));
      assert.equal((await session.next()).id, first);
      assert.equal((await session.next()).id, second);
    });

    if (!inProcess) {
      it('records a job for every tool call that ran and none for refused lines, and stops cleanly', async () => {
        await assertServing();
        await session.close();
        const store = new SqliteJobStore(storeFile);
        try {
          const jobs = store.list({}).reverse();
          assert.deepEqual(
            // Tool names: the capability hostile.depth is the tool hostile_depth.
            jobs.map((job) => job.steps[0]?.capability?.replaceAll('.', '_')),
            ran,
          );
        } finally {
          store.close();
        }
      });
    }
  });
}

const directory = mkdtempSync(join(tmpdir(), 'warrant-mcp-hostile-'));
const storeFile = join(directory, 'jobs.db');
const children: ChildProcessWithoutNullStreams[] = [];
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});

hostileSuite(
  'warrant mcp (child process) under hostile input',
  async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        resolve(ROOT, 'src/cli/main.ts'),
        'mcp',
        '--store',
        `sqlite:${storeFile}`,
        '--module',
        MODULE,
      ],
      { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    children.push(child);
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.stdin.on('error', () => {});
    const next = reader(child.stdout);
    let closed: Promise<void> | undefined;
    return {
      write: (data) => void child.stdin.write(data),
      next,
      close: () =>
        (closed ??= (async () => {
          const exited = child.exitCode === null ? once(child, 'exit') : undefined;
          child.stdin.end();
          const [code] = (await exited) ?? [child.exitCode];
          assert.equal(code, 0, stderr);
          assert.match(stderr, /warrant mcp: stdin closed, stopping\n$/);
          assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace on stderr');
        })()),
    };
  },
  false,
);

hostileSuite(
  'McpAdapter in-process over the stdio transport under hostile input',
  async () => {
    const runtime = new OperatorRuntime();
    runtime.use(hostileModule);
    const input = new PassThrough();
    const output = new PassThrough();
    const handle = serveStdio(() => new McpAdapter(runtime).createServer(), {
      transport: new StdioLineTransport(input, output),
    });
    return {
      write: (data) => void input.write(data),
      next: reader(output),
      close: async () => {
        await handle.close();
        await runtime.close();
      },
    };
  },
  true,
);
