/** Who asked for the plan. The runtime keeps a frozen snapshot for the whole job. */
export interface ExecutionCaller {
  readonly id?: string;
  readonly scopes?: readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly [key: string]: unknown;
}
