/** Who asked for the plan. The runtime keeps a frozen snapshot for the whole job. */
export interface ExecutionCaller {
  readonly id?: string;
  readonly scopes?: readonly string[];
  /** The caller's tenant: tenants never cross (docs/api.md, "Reading and tenants"). */
  readonly tenant?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly [key: string]: unknown;
}
