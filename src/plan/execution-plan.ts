import type { StepBounds } from './bounds.js';

/**
 * The plan formats Warrant knows (docs/api.md, "Plan version 2.0"). A runtime admits those its
 * `planVersions` option lists (default `['1.0']`); `'2.0'` steps take plain JSON data only.
 */
export type PlanVersion = '1.0' | '2.0';

/** A declarative plan: ordered steps run one after another (docs/api.md, "Plans and result references"). */
export interface ExecutionPlan {
  /** Plan format version: one of the runtime's `planVersions` (default only `'1.0'`). */
  version: PlanVersion;
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
  /**
   * Plan version 2.0 only: what each top-level input field may hold, in a JSON Schema subset
   * (docs/api.md, "Bounds"). Checked on the resolved input only when a plan grant is used.
   */
  bounds?: StepBounds;
  reason?: string;
  idempotencyKey?: string;
}

/** `{ $ref: 'steps.<stepId>.result(.<segment>)*' }`: a value inside an earlier step's result. */
export interface ResultReference {
  $ref: string;
}
