/**
 * What every command that runs plans shares: the options that build a runtime (`--module`,
 * `--authorizer`, `--store`, `--fs-root`, `--http-allow`) and the runtime itself, with the
 * built-in capability modules registered by the program (never by the library).
 */
import { approveCommandLine } from '../approvals/approve-command.js';
import { ErrorCode } from '../errors/error-codes.js';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createFsModule } from '../builtins/fs-module.js';
import { createHttpModule } from '../builtins/http-module.js';
import { createSystemModule } from '../builtins/system-module.js';
import {
  OperatorRuntime,
  type ApproverPolicy,
  type CapabilityModule,
  type CapabilityRisk,
  type Job,
  type OperatorRuntimeOptions,
} from '../index.js';
import { createMcpCapability } from '../mcp/outbound.js';
import { onMcpToolState } from '../mcp/tool-pins.js';
import { loadApprover, loadAuthorizer, loadCapabilityModules } from './load-modules.js';
import { writeErr } from './output.js';
import { loadPolicyAuthorizer } from './policy-file.js';
import { readPinsFile } from './pins-file.js';
import { waitingFor } from './unsettled.js';
import { firstLine, UsageError } from './usage-error.js';
import { parseJson } from '../json/parse-json.js';

/** The embedded default store of the program (docs/guide/stores.md, "Which store"). */
export const DEFAULT_STORE = 'sqlite:./.warrant/jobs.db';

export const runtimeOptions = {
  module: { type: 'string', multiple: true },
  'mcp-server': { type: 'string', multiple: true },
  'mcp-tool': { type: 'string', multiple: true },
  pins: { type: 'string' },
  authorizer: { type: 'string' },
  policy: { type: 'string' },
  store: { type: 'string' },
  'fs-root': { type: 'string' },
  'http-allow': { type: 'string' },
  'http-allow-private': { type: 'boolean' },
  approvals: { type: 'boolean' },
  approvers: { type: 'string' },
  'plan-versions': { type: 'string' },
  // Read as lists so that a repeated one is refused, not silently the last (notificationsOf).
  notify: { type: 'string', multiple: true },
  'notify-secret-file': { type: 'string', multiple: true },
  'notify-format': { type: 'string', multiple: true },
  'notify-allow-private': { type: 'boolean' },
  'public-url': { type: 'string', multiple: true },
  limits: { type: 'string' },
} as const;

/** The help of each runtime option, by name, in the order `--help` lists them. */
const RUNTIME_OPTIONS_HELP: readonly (readonly [keyof typeof runtimeOptions, string])[] = [
  [
    'module',
    `  --module <file>       capability module(s) to register (default export; repeatable)`,
  ],
  [
    'authorizer',
    `  --authorizer <file>   authorizer (default export { authorize(context) }); default policy:
                        reads allowed, writes and destructive work denied
                        (module and authorizer files: regular files of at most 10 MiB;
                        .ts, .mts, .cts and .tsx files are loaded through tsx, which must
                        be installed in your project: npm i -D tsx)`,
  ],
  [
    'policy',
    `  --policy <file.cedar> Cedar policies decide each step (docs/guide/policies.md);
                        not with --authorizer`,
  ],
  [
    'store',
    `  --store <store>       'memory', 'sqlite:<file>' (its directory must exist; only ./.warrant/
                        is created) or a postgres:// URL (?statement_timeout=<ms>, default
                        30000); opened at start-up (default: $WARRANT_STORE when set,
                        else ${DEFAULT_STORE})`,
  ],
  [
    'approvals',
    `  --approvals           human approval (docs/guide/approvals.md): the default policy asks
                        approval for writes and destructive work; an authorizer may
                        answer require_approval`,
  ],
  [
    'approvers',
    `  --approvers <file>    with --approvals: the approver policy (default export
                        { canApprove(approver, request) }); default: any caller but the
                        one who submitted the plan`,
  ],
  [
    'plan-versions',
    `  --plan-versions <list>
                        plan versions admitted, comma-separated (default 1.0); 2.0 plans
                        take plain JSON data only (docs/guide/capabilities.md)`,
  ],
  [
    'notify',
    `  --notify <url>        POST a signed notification (Standard Webhooks) when a job needs
                        approval or ends (docs/guide/notifications.md; one destination); with`,
  ],
  [
    'notify-secret-file',
    `  --notify-secret-file <file>
                        the secret, whsec_<base64>, read from <file> (never a flag)`,
  ],
  [
    'notify-format',
    `  --notify-format slack post Slack-compatible messages instead (no secret needed)`,
  ],
  [
    'notify-allow-private',
    `  --notify-allow-private
                        let --notify reach a loopback, private or link-local address`,
  ],
  ['public-url', `  --public-url <url>    the console's public URL, linked from Slack messages`],
  [
    'limits',
    `  --limits <file.json>  rate and cost limits (docs/guide/limits.md): a JSON array of
                        { name, match?, per, max, windowMs, cost? }, counted in the store`,
  ],
  ['fs-root', `  --fs-root <dir>       enable fs.read / fs.write, confined to <dir>`],
  [
    'http-allow',
    `  --http-allow <hosts>  comma-separated hosts http.get may reach (default: none); a bare
                        host allows ports 80 and 443, host:port (or [::1]:port) that port`,
  ],
  [
    'http-allow-private',
    `  --http-allow-private  let http.get reach loopback, private, link-local, unique-local
                        and metadata addresses (refused by default, after resolution)`,
  ],
  [
    'mcp-server',
    `  --mcp-server <name>=<command line>
                        a downstream MCP server over stdio (repeatable)`,
  ],
  [
    'mcp-tool',
    `  --mcp-tool <name>.<tool>=<risk>
                        expose one of its tools as the governed capability <name>.<tool>;
                        the risk (read, write or destructive) is required (repeatable)`,
  ],
  [
    'pins',
    `  --pins <file>         the pins file of the --mcp-server tools ("warrant mcp pin"): a
                        tool whose definition is not the one pinned, or is not pinned,
                        is refused (TOOL_DEFINITION_CHANGED); without it each tool is
                        pinned as first listed, for the life of the process`,
  ],
];

/** The help of the runtime options, all of them or `names` (`replaced`: other text for some). */
export function runtimeOptionsHelpOf(
  names: readonly (keyof typeof runtimeOptions)[] = RUNTIME_OPTIONS_HELP.map(([name]) => name),
  replaced: Partial<Record<keyof typeof runtimeOptions, string>> = {},
): string {
  return RUNTIME_OPTIONS_HELP.filter(([name]) => names.includes(name))
    .map(([name, text]) => replaced[name] ?? text)
    .join('\n');
}

export const runtimeOptionsHelp = runtimeOptionsHelpOf();

/** The parseArgs options of `names` only: a command refuses the others. */
export function runtimeOptionsOf<const Name extends keyof typeof runtimeOptions>(
  names: readonly Name[],
): Pick<typeof runtimeOptions, Name> {
  return Object.fromEntries(names.map((name) => [name, runtimeOptions[name]])) as Pick<
    typeof runtimeOptions,
    Name
  >;
}

/**
 * The store a command opens: `--store`, else the environment variable WARRANT_STORE (when not
 * empty), else the default (docs/guide/cli.md, "Commands").
 */
export function storeOf(flag: string | undefined): string {
  if (flag !== undefined) return flag;
  const fromEnvironment = process.env.WARRANT_STORE;
  return fromEnvironment === undefined || fromEnvironment === '' ? DEFAULT_STORE : fromEnvironment;
}

export interface RuntimeFlags {
  module?: string[];
  'mcp-server'?: string[];
  'mcp-tool'?: string[];
  pins?: string;
  authorizer?: string;
  policy?: string;
  store?: string;
  'fs-root'?: string;
  'http-allow'?: string;
  'http-allow-private'?: boolean;
  approvals?: boolean;
  approvers?: string;
  'plan-versions'?: string;
  notify?: string | readonly string[];
  'notify-secret-file'?: string | readonly string[];
  'notify-format'?: string | readonly string[];
  'notify-allow-private'?: boolean;
  'public-url'?: string | readonly string[];
  limits?: string;
}

/**
 * A store URL as an approve command may show it: a PostgreSQL URL without its password (the
 * approver's PGPASSWORD or ~/.pgpass gives it; docs/decisions.md, "Approve commands carry no
 * password"), anything else as it is.
 */
export function withoutPassword(store: string): string {
  if (!/^postgres(ql)?:\/\//i.test(store)) return store;
  let url: URL;
  try {
    url = new URL(store);
  } catch {
    // Not a URL the store would open either: shown as nothing that could hold a password.
    return 'postgres://...';
  }
  if (url.password === '') return store;
  url.password = '';
  return url.href;
}

/**
 * The flags a decision needs to run the approved step as this process would (docs/guide/
 * approvals.md): its store, modules, authorizer or policy, approvers, plan versions, limits and
 * pins, as words, for the approve commands printed by `warrant run` and in notifications.
 */
export function decisionFlags(flags: RuntimeFlags): string[] {
  const words: string[] = [];
  const store = flags.store === undefined ? undefined : withoutPassword(flags.store);
  for (const module of flags.module ?? []) words.push('--module', module);
  for (const server of flags['mcp-server'] ?? []) words.push('--mcp-server', server);
  for (const tool of flags['mcp-tool'] ?? []) words.push('--mcp-tool', tool);
  for (const [name, value] of [
    ['store', store],
    ['authorizer', flags.authorizer],
    ['policy', flags.policy],
    ['approvers', flags.approvers],
    ['fs-root', flags['fs-root']],
    ['http-allow', flags['http-allow']],
    ['plan-versions', flags['plan-versions']],
    ['limits', flags.limits],
    ['pins', flags.pins],
  ] as const) {
    if (value !== undefined) words.push(`--${name}`, value);
  }
  // The approved step reaches what this process may (docs/api.md, "Prepared effects").
  if (flags['http-allow-private'] === true) words.push('--http-allow-private');
  return words;
}

/**
 * The planDigest of the plan request `stepId` holds, when its last request is one (docs/api.md,
 * "Plan warrants": a plan request is held by the plan's first step).
 */
function planRequestDigest(job: Job, stepId: string): string | undefined {
  for (let at = job.events.length - 1; at >= 0; at--) {
    const data = job.events[at]?.data;
    if (job.events[at]?.type !== 'approval.requested' || data?.stepId !== stepId) continue;
    return data.kind === 'plan' && typeof data.planDigest === 'string'
      ? data.planDigest
      : undefined;
  }
  return undefined;
}

/**
 * The command that approves the waiting step of `job` (none when no step waits), with the flags
 * the decision needs to run it (`decisionFlags`); the approver is the caller of `--caller`,
 * someone other than the submitter. Printed by `warrant run` and by `warrant approvals approve`
 * when the job stops at its next approval (docs/guide/approvals.md, "From the program").
 */
export function approveCommand(job: Job, flags: RuntimeFlags): string {
  const step = job.steps.find((waiting) => waiting.status === 'awaiting_approval');
  const planDigest = step === undefined ? undefined : planRequestDigest(job, step.id);
  if (planDigest !== undefined) {
    // One plan request for the whole plan (docs/api.md, "Plan warrants").
    const command = approveCommandLine(job.id, undefined, planDigest, [
      ...decisionFlags(flags),
      '--caller',
      '{"id":"<approver>"}',
    ]);
    return `\nthe plan awaits approval; to approve it:\n  ${command}\n`;
  }
  if (step?.decision === undefined) return '';
  const command = approveCommandLine(job.id, step.id, step.decision.inputDigest, [
    ...decisionFlags(flags),
    '--caller',
    '{"id":"<approver>"}',
  ]);
  return `\nstep ${step.id} awaits approval; to approve it:\n  ${command}\n`;
}

/** The largest limits file read. */
const MAX_LIMITS_FILE = 1024 * 1024;

/**
 * `--limits <file.json>`: the runtime's `limits`, parsed here and checked by the runtime (a bad
 * limit is a usage error naming the file and the limit).
 */
function limitsOf(flags: RuntimeFlags): unknown {
  const file = flags.limits;
  if (file === undefined) return undefined;
  let text: string;
  try {
    if (statSync(file).size > MAX_LIMITS_FILE)
      throw new Error(`larger than ${MAX_LIMITS_FILE} bytes`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--limits ${file}: cannot read it (${firstLine(error)})`);
  }
  try {
    return parseJson(text);
  } catch (error) {
    throw new UsageError(`--limits ${file}: not JSON (${firstLine(error)})`);
  }
}

/** The largest secret file read (a secret is a line of at most a few hundred bytes). */
const MAX_SECRET_FILE = 4096;

type NotifyFlag = 'notify' | 'notify-secret-file' | 'notify-format' | 'public-url';

/**
 * A notification flag given at most once: the program serves one destination, and a second
 * `--notify` that silently replaced the first lost notifications (docs/guide/notifications.md).
 */
function once(flags: RuntimeFlags, name: NotifyFlag): string | undefined {
  const value = flags[name];
  if (value === undefined || typeof value === 'string') return value;
  if (value.length > 1)
    throw new UsageError(
      `--${name} may be given once: the program notifies one destination (several: the library's notifications option)`,
    );
  return value[0];
}

/**
 * `--notify <url>` with `--notify-secret-file` (and `--notify-format`, `--public-url`): the
 * runtime's `notifications`. The secret comes from a file only, so it is never in a process
 * listing or a shell history, and never in a message.
 */
function notificationsOf(flags: RuntimeFlags): OperatorRuntimeOptions['notifications'] {
  const url = once(flags, 'notify');
  const publicUrl = once(flags, 'public-url');
  if (url === undefined) {
    for (const flag of [
      'notify-secret-file',
      'notify-format',
      'public-url',
      'notify-allow-private',
    ] as const)
      if (flags[flag] !== undefined) throw new UsageError(`--${flag} needs --notify <url>`);
    return undefined;
  }
  const format = once(flags, 'notify-format');
  if (format !== undefined && format !== 'slack' && format !== 'standard')
    throw new UsageError(
      `--notify-format must be slack or standard, got ${JSON.stringify(format)}`,
    );
  const file = once(flags, 'notify-secret-file');
  let secret: string | undefined;
  if (file !== undefined) {
    try {
      if (statSync(file).size > MAX_SECRET_FILE) throw new Error('larger than 4 KiB');
      secret = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new UsageError(`--notify-secret-file ${file}: cannot read it (${firstLine(error)})`);
    }
  } else if (format !== 'slack') {
    throw new UsageError('--notify needs --notify-secret-file <file> (or --notify-format slack)');
  }
  return [
    {
      url,
      ...(secret !== undefined && { secret }),
      ...(format !== undefined && { format }),
      ...(publicUrl !== undefined && { publicUrl }),
      ...(flags['notify-allow-private'] === true && { allowPrivate: true }),
      // A Slack message's approve command carries what the decision needs (issue 47 item 2).
      approveFlags: decisionFlags(flags),
    },
  ];
}

/**
 * The program's default approver policy: any caller may decide; the runtime itself refuses the
 * caller who submitted the plan (APPROVAL_SELF_APPROVAL).
 */
const anyoneButRequester: ApproverPolicy = Object.freeze({ canApprove: () => true });

/** The only directory the program creates for a SQLite store: `./.warrant/` (the default's). */
const STORE_DIRECTORY = '.warrant';

/**
 * Prepares the directory of a `sqlite:<file>` store: `./.warrant/` is created when it is the
 * file's directory (so the default works on a fresh clone); any other directory must exist.
 */
function prepareStore(store: string): void {
  if (!store.startsWith('sqlite:') || store === 'sqlite::memory:') return;
  const directory = dirname(resolve(store.slice('sqlite:'.length)));
  if (directory === resolve(STORE_DIRECTORY)) {
    try {
      mkdirSync(directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new UsageError(
          `--store ${store}: cannot create ${STORE_DIRECTORY}/ (${firstLine(error)})`,
        );
    }
    return;
  }
  let isDirectory: boolean;
  try {
    isDirectory = statSync(directory).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory)
    throw new UsageError(
      `--store ${store}: the directory ${directory} does not exist (only ./${STORE_DIRECTORY}/ is created)`,
    );
}

/**
 * The `--store` of a command that needs PostgreSQL (`warrant worker`, `warrant serve --queue`:
 * workers share it, docs/guide/stores.md, "Many machines"); a usage error naming `what` otherwise.
 */
export function postgresStoreFlag(store: string | undefined, what: string): string {
  if (store === undefined || !/^postgres(ql)?:\/\//.test(store))
    throw new UsageError(`${what} needs --store <postgres://...>: workers share PostgreSQL`);
  return store;
}

/** The store for messages; a PostgreSQL URL is not shown (it may hold a password). */
export function storeLabel(store: string): string {
  return store.startsWith('postgres') ? 'the PostgreSQL store' : `the store ${store}`;
}

function createRuntime(options: OperatorRuntimeOptions, limitsFile?: string): OperatorRuntime {
  try {
    return new OperatorRuntime(options);
  } catch (error) {
    // A malformed --store or --plan-versions: the library names it options.store, options.planVersions.
    throw new UsageError(
      firstLine(error)
        .replace(/^options\.store/, '--store')
        // A store object is the library's alone: the command line names a store.
        .replace(
          "'sqlite:<file>', a postgres:// URL or a store object",
          "'sqlite:<file>' or a postgres:// URL",
        )
        .replace(/^options\.planVersions/, '--plan-versions')
        .replace(/^options\.notifications\[0\]\.url/, '--notify')
        .replace(/^options\.notifications\[0\]\.secret/, '--notify-secret-file')
        .replace(/^options\.notifications\[0\]\.publicUrl/, '--public-url')
        .replace(/^options\.notifications/, '--notify')
        .replace(/^options\.limits/, `--limits ${limitsFile ?? ''}: limits`),
    );
  }
}

/**
 * Opens the store now, so that a store that cannot be opened (a missing directory, a corrupt or
 * locked file, an unreachable or refusing PostgreSQL) is a usage error at start-up (exit 2)
 * before any plan runs, not a failure of the first request.
 */
async function openStoreNow(runtime: OperatorRuntime, store: string): Promise<void> {
  waitingFor(`${storeLabel(store)} never answered`);
  try {
    await runtime.listJobs({ limit: 0 });
  } catch (error) {
    await runtime.close().catch(() => {});
    const message = firstLine(error);
    const code = (error as { code?: unknown } | null)?.code;
    // These messages already name the store (with its password hidden).
    const named = code === ErrorCode.STORE_OPEN_FAILED || code === ErrorCode.STORE_SCHEMA_TOO_NEW;
    throw new UsageError(named ? message : `cannot open ${storeLabel(store)}: ${message}`);
  }
}

/** Registers one module; a module the inventory refuses is a usage error naming its source. */
function useModule(runtime: OperatorRuntime, module: CapabilityModule, source: string): void {
  try {
    runtime.use(module);
  } catch (error) {
    throw new UsageError(`${source}: ${firstLine(error)}`);
  }
}

/**
 * The runtime of a command: the authorizer loaded, the built-ins, `--module` files and
 * `--mcp-server` tools registered (exit 2 for a bad one), then the store opened (exit 2 if it
 * cannot be), all before any plan runs.
 */
export async function createProgramRuntime(
  flags: RuntimeFlags,
  extra: OperatorRuntimeOptions = {},
): Promise<OperatorRuntime> {
  const store = storeOf(flags.store);
  const downstream = mcpModules(flags);
  // Only the servers take up the jobs of gone processes (`extra.recover`): a command that
  // inspects, decides or runs one plan never runs other work as a side effect
  // (docs/decisions.md, "Which commands recover").
  const options: OperatorRuntimeOptions = { recover: false, ...extra, store };
  if (flags.authorizer !== undefined && flags.policy !== undefined)
    throw new UsageError('--policy and --authorizer cannot be used together');
  if (flags.authorizer !== undefined) options.authorizer = await loadAuthorizer(flags.authorizer);
  if (flags.policy !== undefined) options.authorizer = await loadPolicyAuthorizer(flags.policy);
  if (flags.approvers !== undefined && flags.approvals !== true)
    throw new UsageError('--approvers needs --approvals');
  if (flags.approvals === true) {
    options.approvals = {
      approver:
        flags.approvers === undefined ? anyoneButRequester : await loadApprover(flags.approvers),
    };
  }
  if (flags['plan-versions'] !== undefined) {
    // Checked by the runtime (RUNTIME_OPTIONS_INVALID, shown as a usage error naming the flag).
    options.planVersions = flags['plan-versions']
      .split(',')
      .map((version) => version.trim()) as OperatorRuntimeOptions['planVersions'];
  }
  const notifications = notificationsOf(flags);
  if (notifications !== undefined) options.notifications = notifications;
  const modules = await loadCapabilityModules(flags.module ?? []);
  // The constructor checks the options and opens nothing.
  const limits = limitsOf(flags);
  if (limits !== undefined) options.limits = limits as OperatorRuntimeOptions['limits'];
  const runtime = createRuntime(options, flags.limits);
  runtime.use(createSystemModule());
  const allowHosts = (flags['http-allow'] ?? '')
    .split(',')
    .map((host) => host.trim())
    .filter(Boolean);
  let httpModule: CapabilityModule;
  try {
    httpModule = createHttpModule({
      allowHosts,
      allowPrivate: flags['http-allow-private'] === true,
    });
  } catch (error) {
    throw new UsageError(`--http-allow: ${(error as Error).message}`);
  }
  runtime.use(httpModule);
  if (flags['fs-root'] !== undefined) runtime.use(createFsModule({ root: flags['fs-root'] }));
  for (const { file, module } of modules) useModule(runtime, module, `--module ${file}`);
  for (const { server, module } of downstream) useModule(runtime, module, `--mcp-server ${server}`);
  prepareStore(store);
  await openStoreNow(runtime, store);
  if (store.startsWith('sqlite:') && store !== 'sqlite::memory:')
    await checkSharedKey(runtime, store);
  waitingFor('the command never settled');
  return runtime;
}

/**
 * Several processes may share one SQLite file (docs/guide/stores.md, "Several processes on one
 * SQLite file"), but only with the same audit key: a process with another key (or none) writes
 * chains the others report broken. When the newest job's chain fails at its first event, the file
 * was written with another key than this process's: one line on stderr says so at start (the
 * command still runs).
 */
async function checkSharedKey(runtime: OperatorRuntime, store: string): Promise<void> {
  try {
    const [newest] = await runtime.listJobs({ limit: 1 });
    if (newest === undefined) return;
    const verification = await runtime.verifyJob(newest.id);
    if (verification === undefined || verification.ok || verification.eventIndex !== 0) return;
    writeErr(
      `warrant: ${store} was written with another audit key than this process's (WARRANT_AUDIT_KEY): its newest job does not verify with it; processes sharing a file must use the same key\n`,
    );
  } catch {
    // A record that cannot be read is reported by the command that reads it.
  }
}

/**
 * The servers of `--mcp-server name=command line`, by name (docs/guide/mcp.md, "Downstream MCP
 * servers"): the command line split on spaces.
 */
export function mcpServersOf(
  flags: RuntimeFlags,
): Map<string, { command: string; args: string[] }> {
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
  return servers;
}

/** Whether the refusals of downstream tools are reported on stderr yet (once per process). */
let reporting = false;

/**
 * Each downstream tool refused (docs/api.md, "Pinned tools"), and each that runs again, as a
 * line on stderr: the steps fail with the same message, and an operator sees it at once.
 */
function reportToolStates(): void {
  if (reporting) return;
  reporting = true;
  const refused = new Set<string>();
  onMcpToolState(({ capability, refused: why }) => {
    if (why !== undefined) {
      refused.add(capability);
      writeErr(`warrant: ${capability} is refused: ${why}\n`);
    } else if (refused.delete(capability)) {
      writeErr(`warrant: ${capability} matches its pin again and may run\n`);
    }
  });
}

/**
 * `--mcp-server name=command line` plus `--mcp-tool name.tool=risk`: each tool becomes the
 * capability `name.tool`, governed like any other; one module per downstream server. With
 * `--pins <file>`, each tool is held to its pin there (no pin: refused).
 */
function mcpModules(flags: RuntimeFlags): { server: string; module: CapabilityModule }[] {
  const servers = mcpServersOf(flags);
  if (flags.pins !== undefined && servers.size === 0)
    throw new UsageError('--pins needs --mcp-server: it pins the tools of downstream servers');
  const pins = flags.pins === undefined ? undefined : readPinsFile(flags.pins);
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
        serverName: server,
        tool,
        ...(pins !== undefined && { pin: pins.get(server)?.get(tool) ?? null }),
      });
      byServer.set(server, [...(byServer.get(server) ?? []), capability]);
    } catch (error) {
      throw new UsageError(`--mcp-tool ${entry}: ${(error as Error).message}`);
    }
  }
  if (byServer.size > 0) reportToolStates();
  return [...byServer].map(([server, capabilities]) => ({
    server,
    module: {
      manifest: {
        name: `mcp:${server}`,
        version: '1.0.0',
        capabilities: capabilities.map((capability) => capability.name),
      },
      capabilities,
    },
  }));
}
