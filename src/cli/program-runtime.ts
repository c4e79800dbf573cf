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
import { OperatorRuntime, type OperatorRuntimeOptions } from '../index.js';
import { loadAuthorizer, loadCapabilityModules } from './load-modules.js';

/** The embedded default store of the program (API.md §10; issue: embedded SQLite default). */
export const DEFAULT_STORE = 'sqlite:./.warrant/jobs.db';

export const runtimeOptions = {
  module: { type: 'string', multiple: true },
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
  --http-allow <hosts>  comma-separated hosts http.get may reach (default: none)`;

export interface RuntimeFlags {
  module?: string[];
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
  runtime.use(
    createHttpModule({
      allowHosts: (flags['http-allow'] ?? '')
        .split(',')
        .map((host) => host.trim())
        .filter(Boolean),
    }),
  );
  if (flags['fs-root'] !== undefined) runtime.use(createFsModule({ root: flags['fs-root'] }));
  for (const module of modules) runtime.use(module);
  return runtime;
}
