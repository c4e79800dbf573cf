/**
 * Loads the files named by `--module` (default export: a CapabilityModule or an array of them;
 * a TypeScript-compiled CommonJS file's `exports.default` counts as its default export),
 * `--authorizer` (default export: an ExecutionAuthorizer) and `--caller-resolver` (default
 * export: a function). TypeScript files are loaded
 * through tsx when it is installed (it is a development dependency of this repository). Every
 * problem with such a file is a UsageError (exit code 2), one line.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ApproverPolicy, CapabilityModule, ExecutionAuthorizer } from '../index.js';
import { checkInputFile } from './input-file.js';
import { waitingFor } from './unsettled.js';
import { firstLine, UsageError } from './usage-error.js';

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

/** The `code` of a thrown value, read without trusting it (a module may throw anything). */
function codeOf(thrown: unknown): unknown {
  try {
    return (thrown as { code?: unknown } | null | undefined)?.code;
  } catch {
    return undefined;
  }
}

/**
 * The default export of a file, boxed: an async function returning the export itself would read
 * its `then` (a hostile proxy throws there, outside any check).
 */
async function importDefault(file: string, option: string): Promise<{ value: unknown }> {
  const label = `${option} ${file}`;
  const path = resolve(file);
  await checkInputFile(path, label);
  if (/\.[cm]?tsx?$/.test(path)) await enableTypeScript(file);
  let loaded: { default?: unknown };
  waitingFor(`${label} never finished loading (its top-level await never settled)`);
  try {
    loaded = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    // The file exists (checked above): a module it imports is missing. The import's own error,
    // and for `warrant` where it is looked for (docs/guide/cli.md, "Module files").
    const reason = firstLine(error);
    const hint =
      codeOf(error) === 'ERR_MODULE_NOT_FOUND' && /Cannot find package 'warrant'/.test(reason)
        ? "; a module file imports 'warrant' from the node_modules of its own folder or a parent: keep it inside the project where warrant is installed (npm install warrant), or import nothing from it (a plain object is a module)"
        : '';
    throw new UsageError(`${label}: could not be loaded (${reason})${hint}`);
  }
  if (!('default' in loaded) || loaded.default === undefined) {
    throw new UsageError(`${label}: the module has no default export`);
  }
  return { value: compiledDefault(loaded.default, label) };
}

/**
 * The default export of a TypeScript-compiled CommonJS file: `import()` hands over the whole
 * `module.exports`, which such a file marks `__esModule` and whose `default` is what `export
 * default` meant (docs/guide/cli.md, "Options of the commands that run plans"). Anything else is
 * the export itself.
 */
function compiledDefault(exported: unknown, label: string): unknown {
  try {
    if (typeof exported !== 'object' || exported === null) return exported;
    const marked = Object.getOwnPropertyDescriptor(exported, '__esModule');
    if (marked?.value !== true || !('default' in exported)) return exported;
    const inner = (exported as { default: unknown }).default;
    if (inner === undefined) throw new UsageError(`${label}: the module has no default export`);
    return inner;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${label}: the default export cannot be read (${firstLine(error)})`);
  }
}

/** A capability module and the `--module` file it came from. */
export interface LoadedModule {
  readonly file: string;
  readonly module: CapabilityModule;
}

/** The default export of a `--module` file as a list of candidate modules, read once. */
function candidatesOf(exported: unknown, file: string): unknown[] {
  try {
    if (!Array.isArray(exported)) return [exported];
    return [...(exported as unknown[])];
  } catch (error) {
    throw new UsageError(
      `--module ${file}: the default export cannot be read (${firstLine(error)})`,
    );
  }
}

function isModuleShaped(candidate: unknown, file: string): boolean {
  try {
    return typeof candidate === 'object' && candidate !== null && 'manifest' in candidate;
  } catch (error) {
    throw new UsageError(
      `--module ${file}: the default export cannot be read (${firstLine(error)})`,
    );
  }
}

/** The capability modules of every `--module` file, in order. */
export async function loadCapabilityModules(files: readonly string[]): Promise<LoadedModule[]> {
  const modules: LoadedModule[] = [];
  for (const file of files) {
    const { value: exported } = await importDefault(file, '--module');
    for (const candidate of candidatesOf(exported, file)) {
      if (!isModuleShaped(candidate, file)) {
        throw new UsageError(
          `--module ${file}: the default export must be a capability module { manifest, capabilities } or an array of them`,
        );
      }
      modules.push({ file, module: candidate as CapabilityModule });
    }
  }
  return modules;
}

/**
 * The authorizer of an `--authorizer` file, as a plain object whose `authorize` calls the
 * export's own `authorize` (same `this`, same answer, read at each call as the runtime does), so
 * a hostile export cannot throw while the program starts; at a step it fails closed.
 */
export async function loadAuthorizer(file: string): Promise<ExecutionAuthorizer> {
  const { value: exported } = await importDefault(file, '--authorizer');
  let callable: boolean;
  try {
    callable =
      typeof exported === 'object' &&
      exported !== null &&
      typeof (exported as ExecutionAuthorizer).authorize === 'function';
  } catch (error) {
    throw new UsageError(
      `--authorizer ${file}: the default export cannot be read (${firstLine(error)})`,
    );
  }
  if (!callable) {
    throw new UsageError(
      `--authorizer ${file}: the default export must be an object with an authorize(context) method`,
    );
  }
  const authorizer = exported as ExecutionAuthorizer;
  const wrapper: ExecutionAuthorizer & { name?: string } = {
    authorize: (context) => authorizer.authorize(context),
  };
  // The record names an authorizer by its own string data property `name` (docs/api.md, "Jobs
  // and events"): carry the export's over, read as a descriptor so no getter of the module runs.
  try {
    const name = Reflect.getOwnPropertyDescriptor(exported as object, 'name');
    if (typeof name?.value === 'string') wrapper.name = name.value;
  } catch {
    // A proxy whose trap throws has no name; the authorizer still runs (and fails closed).
  }
  return wrapper;
}

/** The approver policy of an `--approvers` file: a default export `{ canApprove(approver, request) }`. */
export async function loadApprover(file: string): Promise<ApproverPolicy> {
  const { value: exported } = await importDefault(file, '--approvers');
  let callable: boolean;
  try {
    callable =
      typeof exported === 'object' &&
      exported !== null &&
      typeof (exported as ApproverPolicy).canApprove === 'function';
  } catch (error) {
    throw new UsageError(
      `--approvers ${file}: the default export cannot be read (${firstLine(error)})`,
    );
  }
  if (!callable) {
    throw new UsageError(
      `--approvers ${file}: the default export must be an object with a canApprove(approver, request) method`,
    );
  }
  const policy = exported as ApproverPolicy;
  return { canApprove: (approver, request) => policy.canApprove(approver, request) };
}

/**
 * The resolver of a `--caller-resolver` file (`warrant serve`), loaded like the other module
 * files (a regular file of at most 10 MiB, TypeScript through tsx), as a plain function that
 * calls the export: the value handed back is never a thenable of the module's making.
 */
export async function loadResolverModule(file: string): Promise<unknown> {
  const { value: exported } = await importDefault(file, '--caller-resolver');
  if (typeof exported !== 'function') {
    throw new UsageError(
      `--caller-resolver ${file}: the default export must be a function (request) => caller | undefined`,
    );
  }
  return (request: unknown): unknown => Reflect.apply(exported, undefined, [request]);
}
