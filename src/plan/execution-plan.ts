/** A declarative plan: ordered steps run one after another (docs/api.md, "Plans and result references"). */
export interface ExecutionPlan {
  /** Plan format version; only `'1.0'` is accepted. */
  version: '1.0';
  id?: string;
  /** Human description of the plan; trimmed, `External execution plan` when absent or blank. */
  goal?: string;
  steps: ExecutionStep[];
  metadata?: Record<string, unknown>;
  idempotencyKey?: string;
}

/** One step of a plan: a registered capability and the input it receives. */
export interface ExecutionStep {
  /** Unique within the plan (exact string equality). */
  id: string;
  /** Registered capability name (case-sensitive). */
  capability: string;
  /** When supplied (including `''`), must equal the registered version exactly. */
  capabilityVersion?: string;
  /** The input; may contain result references to earlier steps. */
  input?: unknown;
  reason?: string;
  idempotencyKey?: string;
}

/** `{ $ref: 'steps.<stepId>.result(.<segment>)*' }`: a value inside an earlier step's result. */
export interface ResultReference {
  $ref: string;
}
