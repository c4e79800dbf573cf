// Which capabilities the program serves as MCP tools (src/mcp/program-tools.ts): the built-in
// names match the built-in modules, and built-ins are tools only when asked, system.status never.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { createFsModule } from '../../src/builtins/fs-module.js';
import { createHttpModule } from '../../src/builtins/http-module.js';
import { createSystemModule } from '../../src/builtins/system-module.js';
import type { CapabilityDescriptor } from '../../src/index.js';
import { BUILTIN_CAPABILITIES, programTools } from '../../src/mcp/program-tools.js';

function descriptor(name: string): CapabilityDescriptor {
  return { name, version: '1.0.0', description: '', risk: 'read', inputSchema: {} };
}

describe('programTools(builtins)', () => {
  it('knows exactly the capabilities of the built-in modules', () => {
    const modules = [
      createSystemModule(),
      createHttpModule({ allowHosts: [] }),
      createFsModule({ root: tmpdir() }),
    ];
    assert.deepEqual(
      [...BUILTIN_CAPABILITIES].sort(),
      modules.flatMap((module) => module.manifest.capabilities).sort(),
    );
  });

  it('serves the built-ins only when asked, and system.status never', () => {
    const names = [...BUILTIN_CAPABILITIES, 'ticket.get', 'system.other'];
    const served = (builtins: boolean) =>
      names
        .map(descriptor)
        .filter(programTools(builtins))
        .map(({ name }) => name);
    assert.deepEqual(served(false), ['ticket.get', 'system.other']);
    assert.deepEqual(served(true), [
      'system.echo',
      'http.get',
      'http.status',
      'fs.read',
      'fs.write',
      'fs.status',
      'ticket.get',
      'system.other',
    ]);
  });
});
