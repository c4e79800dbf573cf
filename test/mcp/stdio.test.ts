// `warrant mcp` as a real child process driven by a real MCP client over stdio
// (StdioClientTransport), plus its usage errors: the built program, dist/esm/cli/main.js, built by
// `npm test`'s pretest, which starts without compiling src/ through tsx again (docs/decisions.md,
// "Test runs").
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createProgramRuntime } from '../../src/cli/program-runtime.js';
import type { CapabilityDescriptor } from '../../src/index.js';
import { BUILTIN_CAPABILITIES } from '../../src/mcp/program-tools.js';
import { assertMalformedPlanIssues, runPlanToolFlow } from '../support/plan-tool-flow.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BUILT = resolve(ROOT, 'dist/esm/cli/main.js');
const MAIN = [BUILT, 'mcp'];
const MODULE = resolve(ROOT, 'test/mcp/fixtures/stdio-capabilities.ts');
const AUTHORIZER = resolve(ROOT, 'test/mcp/fixtures/stderr-authorizer.ts');
const COLLIDING = resolve(ROOT, 'test/mcp/fixtures/colliding-capabilities.ts');
const SLOW = resolve(ROOT, 'test/mcp/fixtures/slow-capability.ts');
const NOTES = resolve(ROOT, 'test/mcp/fixtures/plan-capabilities.mjs');

interface Served {
  readonly client: Client;
  /** Everything the child wrote to stderr so far. */
  stderr(): string;
  /** Resolves once stderr contains `text`. */
  stderrIncludes(text: string): Promise<void>;
  close(): Promise<void>;
}

async function serve(args: string[]): Promise<Served> {
  assert.ok(existsSync(BUILT), `${BUILT} is missing: run \`npm run build\` first`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...MAIN, '--store', 'memory', ...args],
    cwd: ROOT,
    stderr: 'pipe',
  });
  let text = '';
  const waiting: { needle: string; resolve: () => void }[] = [];
  transport.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const wait of waiting.filter((entry) => text.includes(entry.needle))) wait.resolve();
  });
  const client = new Client({ name: 'warrant-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    stderr: () => text,
    stderrIncludes: (needle) =>
      text.includes(needle)
        ? Promise.resolve()
        : new Promise((done) => waiting.push({ needle, resolve: done })),
    close: () => client.close(),
  };
}

function textOf(result: CallToolResult): string {
  const [block] = result.content;
  assert.equal(block?.type, 'text');
  return (block as { text: string }).text;
}

const execFileAsync = promisify(execFile);

/** The capabilities of the --module fixture: what `warrant mcp` serves without --builtins. */
function moduleCapabilities(runtime: { listCapabilities(): CapabilityDescriptor[] }) {
  return runtime
    .listCapabilities()
    .filter((descriptor) => !BUILTIN_CAPABILITIES.includes(descriptor.name));
}

async function warrantMcp(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  assert.ok(existsSync(BUILT), `${BUILT} is missing: run \`npm run build\` first`);
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [BUILT, 'mcp', ...args], {
      cwd: ROOT,
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

// `warrant mcp --module MODULE`, shared by the tests that only read from it.
const plainServer = serve(['--module', MODULE]);
after(async () => (await plainServer).close());

describe('warrant mcp over stdio, default policy', () => {
  const ready = plainServer;

  it('lists the capabilities of --module (no built-in) from a runtime built from the same flags, dots as _', async () => {
    const { client } = await ready;
    const expected = await createProgramRuntime({ store: 'memory', module: [MODULE] });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        required: tool.inputSchema.required ?? [],
      })),
      moduleCapabilities(expected).map((descriptor) => ({
        name: descriptor.name.replaceAll('.', '_'),
        description: descriptor.description,
        required: Object.keys(descriptor.inputSchema).filter(
          (key) => descriptor.inputSchema[key]?.required,
        ),
      })),
    );
    await expected.close();
  });

  it('runs a read tool and answers with JSON text and structuredContent', async () => {
    const served = await ready;
    const result = await served.client.callTool({
      name: 'stdio_count',
      arguments: { text: 'hello' },
    });
    assert.equal(result.isError, undefined);
    assert.deepEqual(JSON.parse(textOf(result)), { length: 5 });
    assert.deepEqual(result.structuredContent, { length: 5 });
  });

  it('denies a write tool with the default policy message', async () => {
    const { client } = await ready;
    const result = await client.callTool({ name: 'stdio_store', arguments: { note: 'hi' } });
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'Write capability requires explicit approval.');
  });

  it('answers invalid arguments with the admission message', async () => {
    const { client } = await ready;
    const result = await client.callTool({ name: 'stdio_count', arguments: { text: 3 } });
    assert.equal(result.isError, true);
    assert.match(
      textOf(result),
      /^Execution plan failed validation: steps\[0\] "call": input\.text must be a string/,
    );
  });

  it('answers a capability that throws with its message only', async () => {
    const { client } = await ready;
    const result = await client.callTool({ name: 'stdio_explode', arguments: {} });
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'stdio fixture exploded');
  });

  it('stops when the client closes stdin, logging only to stderr', async () => {
    const served = await serve(['--module', MODULE]);
    await served.client.listTools();
    await served.close();
    assert.match(served.stderr(), /^warrant mcp: serving \d+ tools over stdio\n/);
    assert.match(served.stderr(), /warrant mcp: stdin closed, stopping\n$/);
  });
});

describe('warrant mcp over stdio, with --authorizer', () => {
  const ready = serve(['--module', MODULE, '--authorizer', AUTHORIZER]);
  after(async () => (await ready).close());

  it('asks the authorizer nothing and invokes nothing while tools are listed', async () => {
    const served = await ready;
    await served.client.listTools();
    await served.client.listTools();
    // stderr is one ordered pipe: anything listing caused would be written before this call's line.
    await served.client.callTool({ name: 'stdio_count', arguments: { text: 'ab' } });
    await served.stderrIncludes('fixture capability stdio.count invoked');
    assert.deepEqual(served.stderr().match(/fixture (authorizer asked about|capability) \S+/g), [
      'fixture authorizer asked about stdio.count',
      'fixture capability stdio.count',
    ]);
  });

  it('lets the host authorizer approve a write tool', async () => {
    const { client } = await ready;
    const result = await client.callTool({ name: 'stdio_store', arguments: { note: 'hi' } });
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.structuredContent, { stored: true });
  });
});

describe('warrant mcp --approvals --job-tools', () => {
  const ready = serve(['--module', MODULE, '--approvals', '--job-tools']);
  after(async () => (await ready).close());

  it('answers a write call awaiting approval with its job, the same job when retried, and its status through warrant_job_status', async () => {
    const { client } = await ready;
    const { tools } = await client.listTools();
    assert.equal(tools.at(-1)?.name, 'warrant_job_status');
    const call = () => client.callTool({ name: 'stdio_store', arguments: { note: 'hi' } });
    const first = (await call()) as CallToolResult;
    assert.equal(first.isError, true);
    const content = first.structuredContent as Record<string, string>;
    assert.equal(content.status, 'awaiting_approval');
    assert.equal(content.stepId, 'call');
    assert.match(content.inputDigest ?? '', /\S/);
    assert.ok(
      textOf(first).startsWith(`Awaiting approval: job ${content.jobId}, step call. `),
      textOf(first),
    );
    // The approve command carries the flags the decision needs to run the step (its module).
    assert.ok(textOf(first).includes(` --module ${MODULE}`), textOf(first));
    assert.deepEqual((await call()).structuredContent, content);
    const status = (await client.callTool({
      name: 'warrant_job_status',
      arguments: { jobId: content.jobId, waitMs: 0 },
    })) as CallToolResult;
    assert.deepEqual(status.structuredContent, {
      jobId: content.jobId,
      status: 'awaiting_approval',
      steps: [{ id: 'call', capability: 'stdio.store', status: 'awaiting_approval' }],
    });
    const unknown = (await client.callTool({
      name: 'warrant_job_status',
      arguments: { jobId: 'nope' },
    })) as CallToolResult;
    assert.equal(textOf(unknown), 'Job "nope" not found');
  });
});

describe('warrant mcp --wait-ms --job-tools', () => {
  const ready = serve(['--module', SLOW, '--wait-ms', '50', '--job-tools']);
  after(async () => (await ready).close());

  it('answers a call whose job outlives --wait-ms with the job still executing, then its result through warrant_job_status', async () => {
    const { client } = await ready;
    const first = (await client.callTool({ name: 'stdio_slow', arguments: {} })) as CallToolResult;
    assert.equal(first.isError, true);
    const content = first.structuredContent as { jobId: string; status: string };
    // Without --wait-ms the call would answer only after 1.5 s, with { done: true }. After 50 ms
    // the job has not ended: queued still on a loaded machine, or executing.
    assert.ok(['queued', 'executing'].includes(content.status), content.status);
    assert.match(content.jobId, /\S/);
    const status = (await client.callTool({
      name: 'warrant_job_status',
      arguments: { jobId: content.jobId, waitMs: 10_000 },
    })) as CallToolResult;
    const job = status.structuredContent as { status: string; result?: unknown };
    assert.equal(job.status, 'completed');
    assert.deepEqual(job.result, { done: true });
  });
});

// Issue 48: a model-like client proposes a whole plan over stdio.
describe('warrant mcp --plan-tools --job-tools', () => {
  const ready = serve([
    '--module',
    NOTES,
    '--plan-tools',
    '--job-tools',
    '--plan-versions',
    '1.0,2.0',
  ]);
  after(async () => (await ready).close());

  it('previews a three-step plan with references, submits it and follows it to completion', async () => {
    const { client } = await ready;
    const job = await runPlanToolFlow(client);
    assert.equal((job.steps as unknown[]).length, 3);
  });

  it('answers a malformed plan with its issues (code, path, hint) as a tool error', async () => {
    await assertMalformedPlanIssues((await ready).client);
  });

  it('lists no plan tool without --plan-tools', async () => {
    const plain = await serve(['--module', NOTES]);
    try {
      const { tools } = await plain.client.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ['notes_find', 'notes_read', 'notes_summarize'],
      );
    } finally {
      await plain.close();
    }
  });
});

describe('warrant mcp --builtins', () => {
  const plain = plainServer;
  const builtins = serve(['--module', MODULE, '--builtins', '--fs-root', ROOT]);
  after(async () => (await builtins).close());

  it('serves no built-in tool by default, and system.status never', async () => {
    const { tools } = await (await plain).client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['stdio_count', 'stdio_store', 'stdio_explode'],
    );
    const { tools: all } = await (await builtins).client.listTools();
    assert.deepEqual(
      all.map((tool) => tool.name),
      [
        'system_echo',
        'http_get',
        'http_status',
        'fs_read',
        'fs_write',
        'fs_status',
        'stdio_count',
        'stdio_store',
        'stdio_explode',
      ],
    );
  });

  it('publishes the output schema of a built-in and answers with structuredContent', async () => {
    const { client } = await builtins;
    const { tools } = await client.listTools();
    const echo = tools.find((tool) => tool.name === 'system_echo');
    assert.equal(echo?.outputSchema?.type, 'object');
    assert.deepEqual(echo?.outputSchema?.required, ['message', 'at']);
    const result = await client.callTool({ name: 'system_echo', arguments: { message: 'hi' } });
    assert.equal(result.isError, undefined);
    assert.equal((result.structuredContent as { message?: unknown }).message, 'hi');
  });

  it('does not advertise tools.listChanged: the list is fixed', async () => {
    const { client } = await plain;
    assert.deepEqual(client.getServerCapabilities()?.tools, {});
  });
});

describe('warrant mcp usage', () => {
  it('refuses two capabilities that would be one tool name, with exit 2 and one line', async () => {
    const refused = await warrantMcp(['--store', 'memory', '--module', COLLIDING]);
    assert.equal(refused.code, 2);
    assert.equal(refused.stdout, '');
    assert.equal(
      refused.stderr,
      'warrant mcp: Capabilities "ticket.get" and "ticket_get" would both be the MCP tool "ticket_get"; rename one or choose names with options.toolName\n',
    );
  });

  it('makes warrant serve refuse the same module before it listens, with exit 2', async () => {
    const serveArgs = [...MAIN.slice(0, -1), 'serve', '--port', '0', '--store', 'memory'];
    const refused = await execFileAsync(process.execPath, [...serveArgs, '--module', COLLIDING], {
      cwd: ROOT,
      timeout: 60_000,
    }).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    assert.equal(refused.code, 2);
    assert.equal(refused.stdout, '');
    assert.match(
      refused.stderr,
      /^warrant serve: Capabilities "ticket\.get" and "ticket_get" would both be the MCP tool "ticket_get"; .*\n$/,
    );
  });

  it('prints its help on stdout and exits 0 with --help', async () => {
    const help = await warrantMcp(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: warrant mcp \[options\]/);
    assert.match(help.stdout, /--module <file>/);
    assert.match(help.stdout, /--builtins +also serve the built-in capabilities/);
    assert.match(help.stdout, /--job-tools +also serve the tool warrant_job_status/);
    assert.match(help.stdout, /--wait-ms <n> +submit each call's plan and wait/);
    assert.match(help.stdout, /--plan-tools +also serve the tools warrant_preview_plan/);
  });

  it('refuses a --wait-ms that is not an integer from 0 to 2147483647, with exit 2 and one line', async () => {
    for (const value of ['-1', 'soon', '1.5', '2147483648']) {
      const bad = await warrantMcp(['--store', 'memory', `--wait-ms=${value}`]);
      assert.equal(bad.code, 2, value);
      assert.equal(bad.stdout, '', value);
      assert.equal(
        bad.stderr,
        `warrant mcp: --wait-ms must be an integer from 0 to 2147483647, got ${JSON.stringify(value)}\n`,
        value,
      );
    }
  });

  it('reports an unknown option as one line on stderr and exits 2', async () => {
    const bad = await warrantMcp(['--nope']);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /^warrant mcp: Unknown option '--nope'.*\n$/);
  });

  it('reports a missing --module file as one line on stderr and exits 2', async () => {
    const missing = await warrantMcp(['--store', 'memory', '--module', 'no/such/module.js']);
    assert.equal(missing.code, 2);
    assert.equal(missing.stdout, '');
    assert.equal(missing.stderr, 'warrant mcp: --module no/such/module.js: file not found\n');
  });
});
