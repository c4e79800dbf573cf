/**
 * Who acts for the caller now (docs/api.md, "Callers: acting for someone"): an agent acting for
 * the subject, and in `actor.actor` who acted before it (RFC 8693 `act`).
 */
export interface ExecutionActor {
  readonly id: string;
  /** What this actor may do; an actor without `scopes` holds none (`effectiveScopes`). */
  readonly scopes?: readonly string[];
  /** When present, the caller's own tenant. */
  readonly tenant?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Who acted before this actor. */
  readonly actor?: ExecutionActor;
  readonly [key: string]: unknown;
}

/** Who asked for the plan. The runtime keeps a frozen snapshot for the whole job. */
export interface ExecutionCaller {
  /** The subject: the person or service on whose behalf the plan runs. */
  readonly id?: string;
  readonly scopes?: readonly string[];
  /** The caller's tenant: tenants never cross (docs/api.md, "Reading and tenants"). */
  readonly tenant?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Who acts for the subject now, at most 4 deep (docs/api.md, "Callers: acting for someone"). */
  readonly actor?: ExecutionActor;
  readonly [key: string]: unknown;
}
