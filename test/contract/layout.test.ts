// docs/decisions.md, "House rules" "Rules of the house" and docs/decisions.md, "House rules": file names, the import
// arrows, and a test twin for every source file.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const inRoot = (path: string) => join(ROOT, path);

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? listFiles(path) : [relative(ROOT, path).split('\\').join('/')];
  });
}

const srcFiles = listFiles(inRoot('src'));
// The audit console's static files (docs/guide/http.md, "Audit console"): served as they are, not
// compiled; scripts/build.mjs copies them and test/http/console/routes.test.ts checks them.
const CONSOLE_ASSETS = ['index.html', 'app.js', 'app.css'].map(
  (name) => `src/http/console/${name}`,
);
// TypeScript sources: `.ts`, and `.cts` for a module that is CommonJS in both builds
// (src/stores/sqlite/sqlite-driver.cts, docs/decisions.md "Node versions").
const sources = srcFiles.filter((file) => /\.c?ts$/.test(file));

/** Repository paths of the relative imports of a file (static, dynamic and re-exports). */
function importsOf(file: string): string[] {
  const text = readFileSync(inRoot(file), 'utf8');
  const specifiers = /\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;
  return [...text.matchAll(specifiers)].map((match) =>
    posix.normalize(posix.join(posix.dirname(file), match[1] as string)),
  );
}

const CORE = [
  'src/plan/',
  'src/capabilities/',
  'src/authorization/',
  'src/jobs/',
  'src/record/',
  'src/stores/',
  'src/events/',
  'src/approvals/',
  'src/callers/',
  'src/telemetry/',
];
const EDGES = ['src/cli/', 'src/http/', 'src/builtins/'];
const under = (file: string, areas: string[]) => areas.some((area) => file.startsWith(area));

// docs/decisions.md, "House rules": edge files reach the core only through the package root; they may use each
// other and mcp/ (an adapter too, but public, so it cannot import the root's values itself).
// The exceptions:
const EDGE_INTERNALS_ALLOWED: Record<string, string> = {
  'src/http/legacy-routes.ts':
    'the two LEGACY routes of docs/guide/http.md, "The two known bypasses" are documented bypasses (SECURITY.md): they read the inventory and the decision check directly',
};

// Internal modules every edge may use, and why.
const SHARED_WITH_EDGES: Record<string, string> = {
  'src/json/json-value.ts':
    'one JSON encoding of job values: the stores record with it and the edges print with it',
  'src/errors/error-text.ts':
    'one-line error text for every process boundary: the HTTP and MCP answers use it',
  'src/json/answer.ts':
    'one answer encoder for jobs, values and refusals: HTTP, MCP and the CLI answer through it, each in its style',
  'src/json/parse-json.ts':
    "one JSON parser, exact for escaped keys on Node 24's V8: the stores read records with it and the edges read bodies, lines and files with it",
  'src/callers/caller-check.ts':
    'one caller check with the runtime\'s limits: a caller the callers file, a resolver or --caller admits is one the runtime admits (docs/decisions.md, "Callers")',
  'src/errors/error-codes.ts':
    'the one catalog of error codes (docs/errors.md): the edges match codes (HTTP statuses, usage errors) by its names, never by strings',
  'src/capabilities/json-schema.ts':
    "a capability's full input JSON Schema, which descriptors do not carry: MCP tools publish it and GET /api/capabilities answers it for the console",
  'src/limits/window-text.ts':
    'one duration format: the reason of a limit denial and `warrant limits` write a window alike',
  'src/approvals/approve-command.ts':
    'one approve command line: `warrant run`, `warrant approvals`, the MCP "awaiting approval" answer and notifications print it alike, quoted for the shell',
  'src/record/missing-key.ts':
    'the reasons of a keyed record checked without its audit key: `warrant jobs verify` and `warrant evidence verify` tell a missing key (exit 2) from tampering by them',
};

// Internal modules mcp/ may use besides the public ones, and why.
const MCP_INTERNALS_ALLOWED: Record<string, string> = {
  'src/capabilities/json-schema.ts':
    "tools publish a capability's full input JSON Schema, which descriptors do not carry",
  'src/errors/warrant-error.ts':
    'the adapter refuses bad options with coded errors, as the runtime does',
  'src/errors/describe-value.ts':
    'one-line descriptions of bad values and thrown errors in those messages',
  'src/json/canonical-json.ts':
    'a retried call is matched by the digest of its canonical arguments (src/mcp/pending-calls.ts), and a downstream tool by the digest of its definition (src/mcp/tool-pins.ts)',
  'src/capabilities/tool-definition.ts':
    'an outbound MCP tool gives the runtime its pinned definition, which no public capability field may carry (docs/api.md, "Pinned tools")',
};

/** The source file of an import path (imports name the built `.js`). */
const toSource = (target: string): string =>
  target.replace(/\.js$/, '.ts').replace(/\.cjs$/, '.cts');

// docs/decisions.md, "House rules". A file with no test twin needs an entry here. `types` entries are checked to
// hold no runtime code; `coveredBy` entries name the test that exercises them, which must exist.
type NoTwin = { types: string } | { coveredBy: string; reason: string };
const NO_TWIN: Record<string, NoTwin> = {
  'src/index.ts': { coveredBy: 'test/contract/exports.test.ts', reason: 're-exports only' },
  // The rooms of the SQLite and PostgreSQL stores (docs/architecture.md), asserted through the store.
  'src/stores/sqlite/sqlite-schema.ts': {
    coveredBy: 'test/stores/sqlite/sqlite-store.test.ts',
    reason: 'the tables, migrations and ledger and checkpoint statements of the store',
  },
  'src/stores/sqlite/sqlite-rows.ts': {
    coveredBy: 'test/stores/sqlite/sqlite-store.test.ts',
    reason: "the store's write and read statements and how a change is encoded in them",
  },
  'src/stores/postgres/postgres-schema.ts': {
    coveredBy: 'test/stores/postgres/postgres-store.test.ts',
    reason: 'the tables, migrations and owner, ledger and checkpoint statements of the store',
  },
  'src/stores/postgres/postgres-rows.ts': {
    coveredBy: 'test/stores/postgres/postgres-store.test.ts',
    reason: "the store's write and read statements and how a change is encoded in them",
  },
  // The rooms of the runtime facade (docs/architecture.md), each asserted through the runtime
  // method that delegates to it.
  'src/runtime/stored-job.ts': {
    coveredBy: 'test/runtime/recovery.test.ts',
    reason: 'a stored job taken up again, asserted through recovery, approvals and workers',
  },
  'src/runtime/approval-pages.ts': {
    coveredBy: 'test/runtime/read-policy.test.ts',
    reason:
      'pages and counts of pending requests, asserted through runtime.approvalPage and countApprovals',
  },
  'src/runtime/live-jobs.ts': {
    coveredBy: 'test/runtime/job-life.test.ts',
    reason:
      'queue order, concurrency, cancels of live jobs and close(), asserted through submitPlan and cancelJob',
  },
  'src/runtime/runtime-approvals.ts': {
    coveredBy: 'test/runtime/approval-desk.test.ts',
    reason:
      'the approval methods of the facade (list, page, count, decide), asserted through listApprovals and decideApproval',
  },
  'src/runtime/job-reader.ts': {
    coveredBy: 'test/runtime/read-policy.test.ts',
    reason:
      'the read methods of the facade (readable pages, verification, evidence, notifications, waiting jobs, limits), asserted through getJob, listJobs, verifyJob and listNotifications',
  },
  'src/runtime/job-cancel.ts': {
    coveredBy: 'test/workers/queued-cancel.test.ts',
    reason: 'cancels of queued and awaiting jobs not running here, asserted through cancelJob',
  },
  'src/runtime/orphans.ts': {
    coveredBy: 'test/runtime/recovery.test.ts',
    reason: 'gone owners taken up at open and while running, asserted through the runtime',
  },
  'src/runtime/worker-runs.ts': {
    coveredBy: 'test/workers/queued-cancel.test.ts',
    reason: 'dequeued jobs started by a conditional write, asserted through startWorker',
  },
  'src/runtime/runtime-store.ts': {
    coveredBy: 'test/runtime/operator-runtime.test.ts',
    reason: 'the store opened on first use, asserted through every runtime method',
  },
  'src/plan/execution-plan.ts': { types: 'plan types; checked by tsc' },
  'src/capabilities/capability.ts': { types: 'capability types; checked by tsc' },
  'src/capabilities/risk.ts': { types: 'the risk type; checked by tsc' },
  'src/authorization/authorizer.ts': { types: 'authorizer types; checked by tsc' },
  'src/callers/execution-caller.ts': { types: 'the caller type; checked by tsc' },
  'src/approvals/decision-arguments.ts': {
    coveredBy: 'test/runtime/approval-desk.test.ts',
    reason: 'every APPROVAL_DECISION_INVALID refusal is asserted through runtime.decideApproval()',
  },
  'src/runtime/recorded-caller.ts': {
    coveredBy: 'test/callers/caller-snapshot.test.ts',
    reason:
      'how the record keeps a snapshot: one shared object, a -0 written as 0, asserted through executePlan',
  },
  'src/events/runtime-event.ts': { types: 'event types; checked by tsc' },
  'src/policy/cedar-wasm.cts': {
    coveredBy: 'test/contract/light-import.test.ts',
    reason: 'the lazy require of cedar-wasm; loaded only when cedarAuthorizer is called',
  },
  'src/runtime/cancel-policy.ts': {
    coveredBy: 'test/runtime/job-life.test.ts',
    reason:
      'the submitter, the warrant:cancel scope per tenant and cancelPolicy, asserted through runtime.cancelJob()',
  },
  'src/runtime/execute-options.ts': {
    coveredBy: 'test/runtime/operator-runtime.test.ts',
    reason:
      'EXECUTE_OPTIONS_INVALID refusals asserted through executePlan (onReplay: test/runtime/job-waits.test.ts)',
  },
  'src/runtime/submissions.ts': {
    coveredBy: 'test/runtime/operator-runtime.test.ts',
    reason:
      'executePlan and submitPlan, through the facade (idempotent replays: test/runtime/idempotency.test.ts, job-waits.test.ts)',
  },
  'src/runtime/waiting-jobs.ts': {
    coveredBy: 'test/runtime/recovery-default.test.ts',
    reason: 'needs a store with gone owners: a killed child process, SQLite and PostgreSQL',
  },
  'src/runtime/job-options.ts': {
    coveredBy: 'test/runtime/job-life.test.ts',
    reason: 'JOB_OPTIONS_INVALID refusals asserted through submitPlan, waitForJob and cancelJob',
  },
  'src/runtime/job-queue.ts': {
    coveredBy: 'test/runtime/job-life.test.ts',
    reason:
      'submission order, queue.concurrency and a cancelled queued job, asserted through submitPlan',
  },
  'src/jobs/job-store.ts': {
    types: 'the store interface; each store runs the store contract suite',
  },
  'src/cli/main.ts': {
    coveredBy: 'test/cli/cli.test.ts',
    reason: 'the executable; run as a child process',
  },
  'src/cli/usage-error.ts': {
    coveredBy: 'test/cli/cli.test.ts',
    reason: 'a one-line error class; its exit code 2 is asserted through the executable',
  },
  'src/cli/parse.ts': {
    coveredBy: 'test/cli/cli.test.ts',
    reason: 'argument parsing; exercised by every command of the executable',
  },
  'src/cli/format-table.ts': {
    coveredBy: 'test/cli/cli.test.ts',
    reason: 'the summary tables printed by run and capabilities',
  },
  'src/cli/program-runtime.ts': {
    coveredBy: 'test/cli/cli.test.ts',
    reason: 'the runtime wiring every command uses',
  },
  'src/cli/commands/run.ts': { coveredBy: 'test/cli/cli.test.ts', reason: 'warrant run' },
  'src/cli/commands/capabilities.ts': {
    coveredBy: 'test/cli/cli.test.ts',
    reason: 'warrant capabilities',
  },
  'src/cli/commands/serve.ts': { coveredBy: 'test/cli/serve.test.ts', reason: 'warrant serve' },
  'src/cli/commands/mcp.ts': {
    coveredBy: 'test/mcp/stdio.test.ts',
    reason: 'warrant mcp, driven by a real MCP client over stdio',
  },
  'src/http/legacy-routes.ts': {
    coveredBy: 'test/http/server.test.ts',
    reason: 'routes, exercised over a socket',
  },
  'src/http/status-codes.ts': {
    coveredBy: 'test/http/server.test.ts',
    reason: 'every status of docs/guide/http.md, "HTTP routes" is asserted over a socket',
  },
  'src/http/gate-hook.ts': {
    coveredBy: 'test/http/request-gate.test.ts',
    reason: 'the gate on every request, over raw sockets',
  },
  'src/http/error-replies.ts': {
    coveredBy: 'test/http/server.test.ts',
    reason:
      'every error answer asserted over a socket (store outages: test/http/store-outage.test.ts)',
  },
  'src/http/routes/request-caller.ts': {
    types: 'the caller resolver type of the routes; checked by tsc',
  },
  'src/http/routes/health.ts': {
    coveredBy: 'test/http/server.test.ts',
    reason: 'GET /health, exercised over a socket',
  },
  'src/http/routes/capabilities.ts': {
    coveredBy: 'test/http/server.test.ts',
    reason: 'the capability routes, execute included, exercised over a socket',
  },
  'src/http/routes/jobs.ts': {
    coveredBy: 'test/http/server.test.ts',
    reason: 'the job routes, exercised over a socket (verify: test/http/verify-route.test.ts)',
  },
  'src/http/routes/caller.ts': {
    coveredBy: 'test/http/read-access.test.ts',
    reason: 'GET /api/caller, exercised over a socket (the console header: test/console)',
  },
  'src/http/routes/limits.ts': {
    coveredBy: 'test/http/limits-route.test.ts',
    reason: 'GET /api/limits, exercised over a socket',
  },
  'src/http/routes/approvals.ts': {
    coveredBy: 'test/http/approval-routes.test.ts',
    reason: 'the approval routes, exercised over a socket',
  },
  'src/errors/error-codes.ts': {
    coveredBy: 'test/contract/errors.test.ts',
    reason: 'the catalog of codes, held to docs/errors.md row for row',
  },
  'src/errors/warrant-error.ts': {
    coveredBy: 'test/errors/issued-errors.test.ts',
    reason: 'the functions of issued-errors.ts, typed to take catalog codes only (checked by tsc)',
  },
  'src/http/parse-json-body.ts': {
    coveredBy: 'test/http/server.test.ts',
    reason: 'hostile bodies are asserted over a socket',
  },
};

/** Where the test of a source file lives: test/<same path>.test.ts. */
function twinsOf(file: string): string[] {
  return [file.replace(/^src\//, 'test/').replace(/\.c?ts$/, '.test.ts')];
}

/** True when a file declares types only: no function, class, variable, enum or value import. */
function holdsOnlyTypes(file: string): boolean {
  const code = readFileSync(inRoot(file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
  const runtime =
    /^\s*(?:export\s+)?(?:declare\s+)?(?:default\s+|async\s+)?(?:function|class|const|let|var|enum)\b/m;
  const valueImport = /^\s*import\s+(?!type\b)/m;
  return !runtime.test(code) && !valueImport.test(code);
}

describe('source layout', () => {
  it('names every file under src/ in kebab-case .ts or .cts (docs/decisions.md, "House rules")', () => {
    const bad = srcFiles.filter(
      (file) => !/^[a-z0-9-]+\.c?ts$/.test(posix.basename(file)) && !CONSOLE_ASSETS.includes(file),
    );
    assert.deepEqual(bad, []);
  });

  it('keeps plan/, capabilities/, authorization/, jobs/, record/, stores/, events/, approvals/, callers/ and telemetry/ from importing runtime/', () => {
    const violations = sources
      .filter((file) => under(file, CORE))
      .flatMap((file) => importsOf(file).map((target) => `${file} -> ${target}`))
      .filter((edge) => edge.split(' -> ')[1]?.startsWith('src/runtime/'));
    assert.deepEqual(violations, []);
  });

  // docs/architecture.md: the job model is the innermost of the three; the record (chain,
  // verification, checkpoints, evidence) reads jobs; the stores write jobs and seal the record.
  it('keeps jobs/ from importing record/ or stores/, and record/ from importing stores/', () => {
    const outward: Record<string, string[]> = {
      'src/jobs/': ['src/record/', 'src/stores/'],
      'src/record/': ['src/stores/'],
    };
    const violations = sources.flatMap((file) => {
      const refused = Object.entries(outward).find(([area]) => file.startsWith(area))?.[1] ?? [];
      return importsOf(file)
        .filter((target) => under(target, refused))
        .map((target) => `${file} -> ${target}`);
    });
    assert.deepEqual(violations, []);
  });

  it('keeps everything outside cli/ and http/ from importing cli/, http/ or tools/', () => {
    const violations: string[] = [];
    for (const file of sources) {
      for (const target of importsOf(file)) {
        const intoEdge =
          /^src\/(cli|http)\//.test(target) && !under(file, ['src/cli/', 'src/http/']);
        if (intoEdge || target.startsWith('tools/')) violations.push(`${file} -> ${target}`);
      }
    }
    assert.deepEqual(violations, []);
  });

  it('keeps the library core from importing builtins/ (built-ins serve the program only)', () => {
    const violations = sources
      .filter((file) => !under(file, EDGES))
      .flatMap((file) => importsOf(file).map((target) => `${file} -> ${target}`))
      .filter((edge) => edge.split(' -> ')[1]?.startsWith('src/builtins/'));
    assert.deepEqual(violations, []);
  });

  it('keeps the core and runtime/ from importing mcp/ (the adapter sits on top of the runtime)', () => {
    const violations = sources
      .filter((file) => under(file, [...CORE, 'src/runtime/', 'src/errors/']))
      .flatMap((file) => importsOf(file).map((target) => `${file} -> ${target}`))
      .filter((edge) => edge.split(' -> ')[1]?.startsWith('src/mcp/'));
    assert.deepEqual(violations, []);
  });

  it('has no import cycles under src/ (type imports included)', () => {
    const graph = new Map(
      sources.map((file) => [file, [...new Set(importsOf(file).map(toSource))]]),
    );
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of sources) visit(file, []);
    assert.deepEqual(cycles, []);
  });

  // docs/decisions.md, "House rules": a folder is one idea, and two folders that import each other
  // are one idea split in two (as approvals/ and runtime/ were). Files directly under src/ (the
  // package root) count as one node, `src/`.
  it('has no import cycles between folders of src/ (type imports included)', () => {
    const folderOf = (file: string): string => /^src\/[^/]+\//.exec(file)?.[0] ?? 'src/';
    const graph = new Map<string, Set<string>>();
    for (const file of sources) {
      const from = folderOf(file);
      const targets = graph.get(from) ?? new Set<string>();
      graph.set(from, targets);
      for (const target of importsOf(file).map(toSource)) {
        if (!target.startsWith('src/')) continue;
        const to = folderOf(target);
        if (to !== from) targets.add(to);
      }
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (folder: string, path: string[]): void => {
      if (state.get(folder) === 'done') return;
      if (state.get(folder) === 'open') {
        cycles.push([...path.slice(path.indexOf(folder)), folder].join(' -> '));
        return;
      }
      state.set(folder, 'open');
      for (const target of [...(graph.get(folder) ?? [])].sort()) visit(target, [...path, folder]);
      state.set(folder, 'done');
    };
    for (const folder of [...graph.keys()].sort()) visit(folder, []);
    assert.deepEqual(cycles, []);
  });

  // The root re-exports McpAdapter, so the adapter cannot import the root (a cycle, refused
  // above): mcp/ reaches the core through the root or the very modules the root re-exports.
  it('lets mcp/ reach the core only through the package root or the modules it re-exports', () => {
    const publicModules = new Set(importsOf('src/index.ts').map(toSource));
    const violations = sources
      .filter((file) => under(file, ['src/mcp/']))
      .flatMap((file) => importsOf(file).map((target) => [file, toSource(target)] as const))
      .filter(
        ([, target]) =>
          target !== 'src/index.ts' &&
          !under(target, ['src/mcp/']) &&
          !publicModules.has(target) &&
          SHARED_WITH_EDGES[target] === undefined &&
          MCP_INTERNALS_ALLOWED[target] === undefined,
      )
      .map(([file, target]) => `${file} -> ${target}`);
    assert.deepEqual(violations, []);
  });

  it('lets cli/, http/ and builtins/ reach the core only through the package root (docs/decisions.md, "House rules")', () => {
    const violations = sources
      .filter((file) => under(file, EDGES) && EDGE_INTERNALS_ALLOWED[file] === undefined)
      .flatMap((file) => importsOf(file).map((target) => `${file} -> ${target}`))
      .filter((edge) => {
        const target = edge.split(' -> ')[1] as string;
        return (
          target !== 'src/index.js' &&
          !under(target, [...EDGES, 'src/mcp/']) &&
          SHARED_WITH_EDGES[target.replace(/\.js$/, '.ts')] === undefined
        );
      });
    assert.deepEqual(violations, []);
  });

  it('gives every src file a test twin, or an allow-list entry with a reason (docs/decisions.md, "House rules")', () => {
    const missing = sources
      .filter((file) => NO_TWIN[file] === undefined)
      .filter((file) => !twinsOf(file).some((twin) => existsSync(inRoot(twin))))
      .map((file) => `${file}: add ${twinsOf(file).join(' or ')}`);
    assert.deepEqual(missing, []);
  });

  it('keeps the no-twin allow-list honest: files exist, have no twin, and the reason holds', () => {
    const problems: string[] = [];
    for (const [file, entry] of Object.entries(NO_TWIN)) {
      if (!existsSync(inRoot(file))) problems.push(`${file}: no longer exists`);
      else if (twinsOf(file).some((twin) => existsSync(inRoot(twin))))
        problems.push(`${file}: has a test twin now, remove it from the allow-list`);
      else if ('types' in entry && !holdsOnlyTypes(file))
        problems.push(`${file}: listed as types only but holds runtime code`);
      else if ('coveredBy' in entry && !existsSync(inRoot(entry.coveredBy)))
        problems.push(`${file}: covering test ${entry.coveredBy} does not exist`);
    }
    for (const file of Object.keys(EDGE_INTERNALS_ALLOWED)) {
      if (!existsSync(inRoot(file))) problems.push(`${file}: no longer exists`);
    }
    assert.deepEqual(problems, []);
  });
});
