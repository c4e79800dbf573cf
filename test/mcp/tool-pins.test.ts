// Pins of downstream tools (docs/api.md, "Pinned tools"): the definition digest (five fields, RFC
// 8785), and what each listing makes of a tool pinned by a pins file or by its first definition.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, it } from 'node:test';
import {
  ServerDefinitions,
  onMcpToolState,
  toolDefinitionDigest,
  type McpToolState,
} from '../../src/mcp/tool-pins.js';

const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;

describe('toolDefinitionDigest(tool)', () => {
  it('digests the RFC 8785 JSON of name, description, inputSchema, outputSchema and annotations', () => {
    const tool = {
      name: 'echo',
      title: 'not covered',
      description: 'Echoes',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      outputSchema: { type: 'object' },
      annotations: { readOnlyHint: true },
      _meta: { not: 'covered' },
      icons: [],
    };
    assert.equal(
      toolDefinitionDigest(tool),
      sha256(
        '{"annotations":{"readOnlyHint":true},"description":"Echoes","inputSchema":{"properties":{"text":{"type":"string"}},"type":"object"},"name":"echo","outputSchema":{"type":"object"}}',
      ),
    );
  });

  it('leaves an absent field out, so a tool without a description differs from one with an empty one', () => {
    assert.equal(toolDefinitionDigest({ name: 'x' }), sha256('{"name":"x"}'));
    assert.equal(
      toolDefinitionDigest({ name: 'x', description: undefined }),
      sha256('{"name":"x"}'),
    );
    assert.notEqual(toolDefinitionDigest({ name: 'x', description: '' }), sha256('{"name":"x"}'));
  });
});

describe('ServerDefinitions', () => {
  const states: McpToolState[] = [];
  after(onMcpToolState((state) => states.push(state)));

  it('pins the first definition seen of each tool, for its life: a change is refused, a change back runs', () => {
    const server = new ServerDefinitions('MCP server "s"');
    server.watch('s.echo', 'echo', undefined);
    assert.match(server.refusal('echo', undefined) ?? '', /not listed yet/);
    server.listed(new Map([['echo', A]]), 'connected');
    assert.equal(server.pinned('echo', undefined), A);
    server.listed(new Map([['echo', B]]), 'list_changed');
    assert.throws(() => server.pinned('echo', undefined), {
      code: 'TOOL_DEFINITION_CHANGED',
      message: `TOOL_DEFINITION_CHANGED: MCP tool "echo" of MCP server "s" changed since it was pinned (pinned ${A}, listed ${B})`,
    });
    assert.equal(server.seen('echo'), B);
    server.listed(new Map([['echo', A]]), 'list_changed');
    assert.equal(server.pinned('echo', undefined), A);
    // A tool first listed later is pinned as it is then.
    server.listed(
      new Map([
        ['echo', A],
        ['late', B],
      ]),
      'list_changed',
    );
    assert.equal(server.pinned('late', undefined), B);
  });

  it('holds a tool to the pin given (a pins file), and refuses one the file does not pin (null)', () => {
    const server = new ServerDefinitions('MCP server "s"');
    server.listed(
      new Map([
        ['echo', A],
        ['greet', B],
      ]),
      'connected',
    );
    assert.equal(server.pinned('echo', A), A);
    assert.match(
      server.refusal('echo', B) ?? '',
      /changed since it was pinned \(pinned sha256:b+, listed sha256:a+\)$/,
    );
    assert.equal(
      server.refusal('greet', null),
      `TOOL_DEFINITION_CHANGED: MCP tool "greet" of MCP server "s" is not in the pins file (listed ${B}); pin it with "warrant mcp pin"`,
    );
    assert.equal(
      server.refusal('gone', A),
      `TOOL_DEFINITION_CHANGED: MCP tool "gone" of MCP server "s" is no longer listed by the server (pinned ${A})`,
    );
  });

  it('refuses every tool after a listing that failed, until the next one', () => {
    const server = new ServerDefinitions('MCP server "s"');
    server.listed(new Map([['echo', A]]), 'connected');
    server.unlisted('the link dropped');
    assert.equal(
      server.refusal('echo', undefined),
      'TOOL_DEFINITION_CHANGED: the tools of MCP server "s" could not be listed after they changed (the link dropped)',
    );
    server.listed(new Map([['echo', A]]), 'connected');
    assert.equal(server.refusal('echo', undefined), undefined);
  });

  it('reports the state of each capability watching it when it changes, and at the first listing', () => {
    const server = new ServerDefinitions('MCP server "s"');
    server.watch('cap.echo', 'echo', A);
    const from = states.length;
    server.listed(new Map([['echo', A]]), 'connected');
    server.listed(new Map([['echo', A]]), 'list_changed');
    server.listed(new Map([['echo', B]]), 'list_changed');
    server.listed(new Map([['echo', A]]), 'list_changed');
    const mine = states.slice(from).filter((state) => state.capability === 'cap.echo');
    assert.deepEqual(
      mine.map(({ definitionDigest, refused, cause }) => [
        definitionDigest,
        refused !== undefined,
        cause,
      ]),
      [
        [A, false, 'connected'],
        [B, true, 'list_changed'],
        [A, false, 'list_changed'],
      ],
    );
  });
});
