/**
 * What every command that runs plans shares: the options that build a runtime (`--module`,
 * `--authorizer`, `--store`, `--fs-root`, `--http-allow`) and the runtime itself, with the
 * built-in capability modules registered by the program (never by the library).
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createFsModule } from '../builtins/fs-module.js';
import { createHttpModule } from '../builtins/http-module.js';
import { createSystemModule } from '../builtins/system-module.js';
import {
  OperatorRuntime,
  type CapabilityModule,
  type CapabilityRisk,
  type OperatorRuntimeOptions,
} from '../index.js';
import { createMcpCapability } from '../mcp/outbound.js';
import { UsageError } from './usage-error.js';
import { loadAuthorizer, loadCapabilityModules } from './load-modules.js';

/** The embedded default store of the program (API.md §10; issue: embedded SQLite default). */
export const DEFAULT_STORE = 'sqlite:./.warrant/jobs.db';

export const runtimeOptions = {
  module: { type: 'string', multiple: true },
  'mcp-server': { type: 'string', multiple: true },
  'mcp-tool': { type: 'string', multiple: true },
  authorizer: { type: 'string' },
  store: { type: 'string' },
  'fs-root': { type: 'string' },
  'http-allow': { type: 'string' },
} as const;

export const runtimeOptionsHelp = `  --module <file>       capability module(s) to register (default export; repeatable)
  --authorizer <file>   authorizer (default export { authorize(context) }); default policy:
                        reads allowed, writes and destructive work denied
  --store <store>       'memory', 'sqlite:<file>' or a postgres:// URL
                        (default ${DEFAULT_STORE})
  --fs-root <dir>       enable fs.read / fs.write, confined to <dir>
  --http-allow <hosts>  comma-separated hosts http.get may reach (default: none); a bare
                        host allows ports 80 and 443, host:port (or [::1]:port) that port
  --mcp-server <name>=<command line>
                        a downstream MCP server over stdio (repeatable)
  --mcp-tool <name>.<tool>=<risk>
                        expose one of its tools as the governed capability <name>.<tool>;
                        the risk (read, write or destructive) is required (repeatable)`;

export interface RuntimeFlags {
  module?: string[];
  'mcp-server'?: string[];
  'mcp-tool'?: string[];
  authorizer?: string;
  store?: string;
  'fs-root'?: string;
  'http-allow'?: string;
}

/** Opens the store directory of a sqlite store so the default works on a fresh clone. */
function prepareStore(store: string): string {
  if (store.startsWith('sqlite:') && store !== 'sqlite::memory:') {
    mkdirSync(dirname(resolve(store.slice('sqlite:'.length))), { recursive: true });
  }
  return store;
}

export async function createProgramRuntime(
  flags: RuntimeFlags,
  extra: OperatorRuntimeOptions = {},
): Promise<OperatorRuntime> {
  const options: OperatorRuntimeOptions = {
    ...extra,
    store: prepareStore(flags.store ?? DEFAULT_STORE),
  };
  if (flags.authorizer !== undefined) options.authorizer = await loadAuthorizer(flags.authorizer);
  const modules = await loadCapabilityModules(flags.module ?? []);
  const runtime = new OperatorRuntime(options);
  runtime.use(createSystemModule());
  const allowHosts = (flags['http-allow'] ?? '')
    .split(',')
    .map((host) => host.trim())
    .filter(Boolean);
  let httpModule: CapabilityModule;
  try {
    httpModule = createHttpModule({ allowHosts });
  } catch (error) {
    throw new UsageError(`--http-allow: ${(error as Error).message}`);
  }
  runtime.use(httpModule);
  if (flags['fs-root'] !== undefined) runtime.use(createFsModule({ root: flags['fs-root'] }));
  for (const module of modules) runtime.use(module);
  for (const module of mcpModules(flags)) runtime.use(module);
  return runtime;
}

/**
 * `--mcp-server name=command line` plus `--mcp-tool name.tool=risk`: each tool becomes the
 * capability `name.tool`, governed like any other; one module per downstream server.
 */
function mcpModules(flags: RuntimeFlags): CapabilityModule[] {
  const servers = new Map<string, { command: string; args: string[] }>();
  for (const entry of flags['mcp-server'] ?? []) {
    const match = /^([A-Za-z0-9_-]+)=(.+)$/.exec(entry);
    const words = match?.[2]?.trim().split(/\s+/) ?? [];
    if (match === null || words.length === 0)
      throw new UsageError(
        `--mcp-server expects <name>=<command line>, got ${JSON.stringify(entry)}`,
      );
    servers.set(match[1] as string, { command: words[0] as string, args: words.slice(1) });
  }
  const byServer = new Map<string, CapabilityModule['capabilities'][number][]>();
  for (const entry of flags['mcp-tool'] ?? []) {
    const match = /^([A-Za-z0-9_-]+)\.([^=]+)=(.*)$/.exec(entry);
    if (match === null)
      throw new UsageError(
        `--mcp-tool expects <server>.<tool>=<risk>, got ${JSON.stringify(entry)}`,
      );
    const [, server, tool, risk] = match as unknown as [string, string, string, string];
    const target = servers.get(server);
    if (target === undefined)
      throw new UsageError(`--mcp-tool ${entry}: no --mcp-server named ${JSON.stringify(server)}`);
    try {
      const capability = createMcpCapability({
        name: `${server}.${tool}`,
        risk: risk as CapabilityRisk,
        server: target,
        tool,
      });
      byServer.set(server, [...(byServer.get(server) ?? []), capability]);
    } catch (error) {
      throw new UsageError(`--mcp-tool ${entry}: ${(error as Error).message}`);
    }
  }
  return [...byServer].map(([server, capabilities]) => ({
    manifest: {
      name: `mcp:${server}`,
      version: '1.0.0',
      capabilities: capabilities.map((capability) => capability.name),
    },
    capabilities,
  }));
}
