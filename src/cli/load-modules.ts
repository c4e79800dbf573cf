/**
 * Loads the files named by `--module` (default export: a CapabilityModule or an array of them)
 * and `--authorizer` (default export: an ExecutionAuthorizer). TypeScript files are loaded
 * through tsx when it is installed (it is a development dependency of this repository).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CapabilityModule, ExecutionAuthorizer } from '../index.js';
import { UsageError } from './usage-error.js';

let typescriptLoader: Promise<void> | undefined;

async function enableTypeScript(file: string): Promise<void> {
  typescriptLoader ??= import('tsx/esm/api').then(
    (api: { register: () => unknown }) => {
      api.register();
    },
    () => {
      throw new UsageError(
        `${file} is TypeScript; install tsx (npm i -D tsx) or pass the compiled .js file`,
      );
    },
  );
  return typescriptLoader;
}

async function importDefault(file: string, option: string): Promise<unknown> {
  const path = resolve(file);
  if (/\.[cm]?tsx?$/.test(path)) await enableTypeScript(file);
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(path)) {
      throw new UsageError(`${option} ${file}: file not found`);
    }
    throw new UsageError(
      `${option} ${file}: could not be loaded (${(error as Error).message?.split('\n')[0] ?? String(error)})`,
    );
  }
  if (!('default' in loaded) || loaded.default === undefined) {
    throw new UsageError(`${option} ${file}: the module has no default export`);
  }
  return loaded.default;
}

/** The capability modules of every `--module` file, in order. */
export async function loadCapabilityModules(files: readonly string[]): Promise<CapabilityModule[]> {
  const modules: CapabilityModule[] = [];
  for (const file of files) {
    const exported = await importDefault(file, '--module');
    for (const candidate of Array.isArray(exported) ? exported : [exported]) {
      if (typeof candidate !== 'object' || candidate === null || !('manifest' in candidate)) {
        throw new UsageError(
          `--module ${file}: the default export must be a capability module { manifest, capabilities } or an array of them`,
        );
      }
      modules.push(candidate as CapabilityModule);
    }
  }
  return modules;
}

/** The authorizer of an `--authorizer` file. */
export async function loadAuthorizer(file: string): Promise<ExecutionAuthorizer> {
  const exported = await importDefault(file, '--authorizer');
  if (
    typeof exported !== 'object' ||
    exported === null ||
    typeof (exported as ExecutionAuthorizer).authorize !== 'function'
  ) {
    throw new UsageError(
      `--authorizer ${file}: the default export must be an object with an authorize(context) method`,
    );
  }
  return exported as ExecutionAuthorizer;
}
