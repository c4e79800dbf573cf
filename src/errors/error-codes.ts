/**
 * The catalog of error codes (docs/errors.md): every code Warrant issues, each written once, with
 * the meaning docs/errors.md gives it (its "raised when", word for word). Code is checked
 * against it at compile time: createError and issueError take an ErrorCode only, and call sites
 * name a code as `ErrorCode.X`, never as a string (docs/decisions.md, "House rules";
 * test/contract/errors.test.ts holds the catalog and docs/errors.md to each other).
 */

/** Thrown errors: raised across the package root. */
export const THROWN_ERRORS = {
  PLAN_ADMISSION_REJECTED:
    '`executePlan` refused the plan before creating a job; `error.issues` lists every issue (codes below)',
  EXECUTE_OPTIONS_INVALID:
    "`executePlan` options are not an object or cannot be read, or `caller` is not JSON data (the message names the path), `caller.id` not a string, `caller.scopes` not strings, `caller.metadata` not an object; `approval` other than `'steps'`/`'plan'`, or `'plan'` (also on `submitPlan`) on a runtime without the `approvals` option",
  CALLER_INVALID:
    "`executePlan`, `submitPlan` or `cancelJob`: `caller.actor` is refused (more than 4 actors, an actor without a non-empty string `id`, another tenant than the caller's, an id twice in the chain, or no `caller.id`)",
  JOB_STORE_FAILED: 'the job store failed while recording a job (the original error is `cause`)',
  STORE_UNAVAILABLE:
    'a SQLite or PostgreSQL store write failed on a lost connection or a locked database through every retry (docs/api.md, "Store outages"; the driver\'s error is `cause`)',
  JOB_OWNER_LOST:
    'a PostgreSQL store refused a write of a job it ran under an owner lock it has lost (its session ended, docs/api.md "Recovery"): the store goes on under a new owner, and the job is left to recovery (the original error is `cause`)',
  RUNTIME_CLOSED:
    '`executePlan`, `getJob`, `listJobs`, `listApprovals` or `decideApproval` after `runtime.close()`',
  RUNTIME_OPTIONS_INVALID:
    '`new OperatorRuntime(options)` got a malformed option (authorizer, store, maxJobs, maxPlanSteps, logger, onObserverError, auditKey, approvals, planVersions, queue, cancelPolicy, idempotencyTtlMs, recover)',
  JOB_FILTER_INVALID:
    '`listJobs(filter)` (or `listApprovals(filter)`, a non-string `jobId`) got a filter that is not an object, a non-string field or a bad `limit`',
  SUBSCRIPTION_INVALID:
    '`subscribe(type, handler)` with an unknown event type or a non-function handler',
  CAPABILITY_MODULE_INVALID:
    '`use(module)`: the module or manifest is malformed, a capability is not declared in the manifest, or a declared one is missing',
  CAPABILITY_DEFINITION_INVALID:
    "`use()` or `createCapability()`: empty name, non-string version or description, unknown risk, malformed input schema (or its `~standard`) or middleware, no `execute`, bad `timeoutMs`; in `use()`, a plain object's `execute({ input })`",
  CEDAR_POLICY_INVALID:
    '`cedarAuthorizer()` (and `--policy`, exit 2): options other than `{ policies: string, name?: string }`, or policy text Cedar does not parse (the message names the line), a template, an unknown `@warrant` value or a duplicate policy id',
  CAPABILITY_ALREADY_REGISTERED:
    '`use()` with a capability name already in the process-global inventory, whatever its version',
  TIMEOUT_INVALID:
    '`new TimeoutMiddleware(ms)` with an `ms` that is not an integer from 1 to 2147483647 (2^31-1, the longest timer Node honours)',
  STORE_OPEN_FAILED:
    "the SQLite file named by `store: 'sqlite:<file>'` cannot be opened, or the PostgreSQL server of a `postgres://` store cannot be reached or prepared (first use of the runtime; the password is shown as `***`)",
  STORE_SCHEMA_TOO_NEW:
    'the SQLite file or PostgreSQL database was written by a newer Warrant (higher schema version)',
  JOB_NOT_FOUND:
    'the SQLite or PostgreSQL store was asked to update a job it has no row for (someone deleted it)',
  JOB_RECORD_UNREADABLE:
    "a stored job's column is not JSON (its row was edited by hand); `getJob`/`listJobs` reject with it, `verifyJob` answers `{ ok: false, reason }` instead",
  STORE_HEAD_INVALID:
    '`verifyStore({ since })` or `warrant jobs verify --all --since` got a kept head that is not `<seq>:<hash>`',
  EVIDENCE_KEY_INVALID:
    '`exportJob(id, { signingKey })` or `verifyEvidence(bundle, { publicKey })` got a key that is not an Ed25519 key in PEM',
  APPROVAL_DECISION_INVALID:
    "`decideApproval()` got arguments that are not an object, a `kind` other than `'step'`/`'plan'`, a non-string `jobId`/`stepId`/`inputDigest`/`planDigest`/`comment`, a `decision` other than `'approve'`/`'reject'`, an `input` with `'reject'` or on a plan, or an `approver` that is not a caller (JSON data) with a non-empty string `id`",
  APPROVAL_NOT_FOUND:
    "`decideApproval()`: no such job, no such step in it (for `kind: 'plan'`, no plan request in it), or the runtime has no `approvals` option",
  APPROVAL_NOT_PENDING:
    "`decideApproval()`: the step does not await approval (already decided, consumed by a concurrent decision, never asked, or a restored copy of a request the store's ledger holds as decided)",
  APPROVAL_DIGEST_MISMATCH:
    "`decideApproval()`: `inputDigest` (or a plan request's `planDigest`) is not the digest of the request (the approver saw another input, or another plan)",
  APPROVAL_SELF_APPROVAL:
    "`decideApproval()`: the approver's id is an actor's in the job's caller, or the caller's own when no actor acted (checked before the approver policy)",
  APPROVAL_FORBIDDEN:
    '`decideApproval()`: the approver policy did not answer `true` (or a promise of `true`) within 5 s; a throw or a rejection is also no',
  APPROVAL_EXPIRED:
    '`decideApproval()`: the request is past its `expiresAt` (also when found so inside the write that consumes it); its step fails with `Approval expired` and the job fails',
  APPROVAL_CANNOT_RUN:
    '`decideApproval()` approving: this runtime does not register a capability the job needs at the version recorded for it; nothing is consumed, the request stays pending (HTTP `409`)',
  APPROVAL_INPUT_INVALID:
    "`decideApproval()` with `input`: it is not plain JSON data within a 2.0 plan's bounds, the capability's input contract refuses it (in a 2.0 plan, also an undeclared field), or the step was interrupted; nothing is consumed (HTTP `400`)",
  MCP_ADAPTER_OPTIONS_INVALID:
    '`new McpAdapter(runtime, options)` without an `OperatorRuntime`, or with options that are not an object, a non-string `name`/`version`, a non-function `resolveCaller`/`onInternalError`/`toolName`/`include` or a non-object `caller`',
  MCP_TOOL_NAME_INVALID:
    '`new McpAdapter()`: a tool name (the default one of a capability, or what `options.toolName` returned) is not 1 to 128 characters of `A-Z a-z 0-9 _ -`, or `toolName` threw',
  MCP_TOOL_NAME_COLLISION:
    '`new McpAdapter()` (and `warrant mcp`/`warrant serve`, exit 2): two capabilities would be one tool name (`ticket.get` and `ticket_get`)',
  JOB_OPTIONS_INVALID:
    "`submitPlan`, `waitForJob` or `cancelJob` options are not an object or cannot be read, or a field is malformed (`timeoutMs` not a non-negative integer, `signal` not an AbortSignal, `reason` or `idempotencyKey` not a string, `approval` not `'steps'`/`'plan'`)",
  CANCEL_FORBIDDEN:
    "`cancelJob()`: the caller is neither the submitter (same `id` and `tenant`) nor allowed by `cancelPolicy` (asked only within the job's tenant; default: the scope `warrant:cancel`)",
  IDEMPOTENCY_CONFLICT:
    '`submitPlan` or `executePlan`: the idempotency key was used by the same caller (id and tenant) within `idempotencyTtlMs` for another plan (another plan digest)',
  PLAN_SCHEMA_OPTIONS_INVALID:
    "`runtime.planSchema(options)` got options that are not an object, an `include` that is not a function, or a `version` the runtime's `planVersions` do not list",
  JOB_CANCELLED:
    "the reason a running step's `context.signal` is aborted with when its job is cancelled (the message carries the cancel reason)",
  WORKER_ALREADY_RUNNING:
    "`startWorker()` (and `warrant worker`, exit 2): a live worker holds the lock of this worker `id` (`--worker-id`) through 15 s of trying (a peer taking up a gone worker's jobs holds it only for a moment)",
} as const;

/** Step failures: recorded in the job, not thrown. */
export const STEP_FAILURES = {
  CAPABILITY_TIMEOUT:
    'a capability with `timeoutMs` (or `TimeoutMiddleware`) took longer; the step fails with `Capability execution timed out after <ms>ms` and `context.signal` is aborted',
  MIDDLEWARE_NEXT_CALLED_TWICE: 'a middleware called `next()` more than once; the step fails',
  STEP_INTERRUPTED:
    'recovery found a step started and never ended (its process was gone): it may have run; its capability is not declared `retry: { idempotent: true }` and the runtime has no approvals, so the step is `interrupted` and the job fails with an error starting `STEP_INTERRUPTED:`',
  EFFECT_PREPARE_FAILED:
    "a capability's `prepare` threw, rejected, outlasted its `timeoutMs`, or returned a value outside the 2.0 value domain or over 64 KiB of canonical JSON: the step fails with an error starting `EFFECT_PREPARE_FAILED:`, nothing is invoked",
  EFFECT_REFUSED:
    "`http.get` (or a capability of `createHttpCapability`) resolved its host to a loopback, private, link-local, unique-local, shared (CGNAT) or metadata address without `--http-allow-private` (`allowPrivate`): the step is denied with a reason starting `EFFECT_REFUSED:`, its effect recorded; a webhook destination without `allowPrivate: true` is not posted to (the delivery's error)",
  PLAN_DENIED:
    "a plan submitted with `approval: 'plan'` has a step the preview at submission answered `deny`: nothing runs, that step fails with its denial and the job fails with an error starting `PLAN_DENIED:` naming the step and the reason",
} as const;

/** Outbound MCP capabilities (`createMcpCapability`, not exported): the first two thrown at definition, the rest fail the step. */
export const OUTBOUND_MCP_ERRORS = {
  MCP_CAPABILITY_RISK_INVALID:
    "`createMcpCapability()` without an explicit `risk` of exactly `'read'`, `'write'` or `'destructive'` (a tool's risk is never assumed)",
  MCP_CAPABILITY_DEFINITION_INVALID:
    '`createMcpCapability()` with a definition that is not an object, a malformed `server` target (`{ command, args?, env?, cwd? }` or `{ url }`) or an empty `tool` name',
  MCP_SERVER_UNAVAILABLE:
    'the downstream MCP server could not be started or reached (the original error is `cause`)',
  MCP_TOOL_INPUT_INVALID: "the step's input for the tool is not an object",
  MCP_TOOL_FAILED: 'the downstream tool answered with an error; its text is the step error',
  TOOL_DEFINITION_CHANGED:
    "the downstream tool's definition is not its pin (changed, not pinned in the pins file, or no longer listed by the server), at connection or after `notifications/tools/list_changed`: the step fails before the authorizer, nothing is sent downstream, and the step error starts with `TOOL_DEFINITION_CHANGED:`",
} as const;

/** Admission issues: the `error.issues[].code` of PLAN_ADMISSION_REJECTED. */
export const ADMISSION_ISSUES = {
  INVALID_PLAN:
    "the plan or a step is not an object, `steps` is not an array (or too long), a step id is not a non-empty string or a capability not a string (`''` is an unknown capability), an optional field has the wrong type, or a field could not be read",
  UNSUPPORTED_PLAN_VERSION:
    "`version` is not one of the runtime's `planVersions` (default `['1.0']`)",
  EMPTY_PLAN: '`steps` is empty',
  DUPLICATE_STEP_ID: 'two steps share an id (exact equality)',
  UNKNOWN_CAPABILITY: 'a step names a capability that is not registered (case-sensitive)',
  CAPABILITY_VERSION_MISMATCH:
    "a supplied `capabilityVersion` (even `''`) differs from the registered version",
  REQUIRED_INPUT_MISSING: "a required input field is `undefined`, `null` or `''`",
  INPUT_TYPE_MISMATCH:
    'an input field has the wrong type (`number` must be finite; `object` non-null, non-array), or the input is not an object',
  INPUT_INVALID:
    'a Standard Schema `inputSchema` refused a literal input (one issue per schema issue, `field` = its path), or its `validate` threw or gave a malformed result',
  INVALID_RESULT_REFERENCE:
    'a `$ref` does not look like `steps.<id>.result[.<path>]`, has an empty segment, is over 4,096 characters, or sits where it is never resolved (class instance, non-index array key)',
  RESULT_REFERENCE_NOT_EARLIER: 'a `$ref` names the step itself, a later step, or no step',
  AMBIGUOUS_RESULT_REFERENCE: 'a `$ref` matches two earlier step ids (ids containing `.result`)',
  UNKNOWN_STEP_FIELD:
    'in a 2.0 plan, a step has a key other than `id`, `capability`, `capabilityVersion`, `input`, `bounds`, `reason` and `idempotencyKey`',
  UNDECLARED_INPUT_FIELD:
    "in a 2.0 plan, a step's input has a field its capability's field-record `inputSchema` does not declare (a Standard Schema decides for itself; a capability without fields is not checked)",
  BOUNDS_INVALID:
    "a step's `bounds` are not an object from the capability's declared input fields to bounds, use a keyword outside the subset or a malformed keyword value, hold a `pattern` over 1,000 characters or one `safe-regex2` finds unsafe, or sit in a plan that is not version 2.0",
  VALUE_NOT_PLAIN_DATA:
    'in a 2.0 plan, a step input is not plain JSON data: a proxy, accessor, cycle, Date, Map, Set, class instance, function, symbol, bigint, sparse array, own `__proto__` key, `undefined`, `NaN`, `±Infinity`, symbol key, non-enumerable property',
  VALUE_TOO_DEEP: 'in a 2.0 plan, a step input nests deeper than 128 levels',
  VALUE_TOO_MANY_CONTAINERS:
    'in a 2.0 plan, the step inputs hold more than 10,000 objects and arrays (each distinct one counted once)',
  VALUE_TOO_MANY_EDGES:
    'in a 2.0 plan, the step inputs hold more than 100,000 properties and array elements',
  VALUE_TOO_LONG:
    'in a 2.0 plan, the strings and keys of the step inputs hold more than 1,048,576 UTF-16 code units',
} as const;

/** Every code, in the order of docs/errors.md. */
export const ERROR_CATALOG = {
  ...THROWN_ERRORS,
  ...STEP_FAILURES,
  ...OUTBOUND_MCP_ERRORS,
  ...ADMISSION_ISSUES,
} as const;

/** A code of the catalog. */
export type ErrorCode = keyof typeof ERROR_CATALOG;

/** A code of `PlanAdmissionIssue` (docs/api.md, "runtime.executePlan"). */
export type AdmissionIssueCode = keyof typeof ADMISSION_ISSUES;

/** Each code as a value, `ErrorCode.X === 'X'`, so a code is never spelled as a string. */
export const ErrorCode: { readonly [Code in ErrorCode]: Code } = Object.freeze(
  Object.fromEntries(Object.keys(ERROR_CATALOG).map((code) => [code, code])),
) as { readonly [Code in ErrorCode]: Code };
