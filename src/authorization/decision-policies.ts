/**
 * The determining policies of a decision (docs/api.md, "Policy as code: Cedar"): a policy
 * authorizer marks the decision object it answers with, and the executor records the mark as
 * `decision.policies`. A side table, not a property of the answer, so no other authorizer can
 * claim policies (the field stays absent for them) and reading it costs the hot path no
 * allocation. Shared by the ESM and CommonJS builds (docs/decisions.md, "Build").
 */
import { processGlobal } from '../process/process-global.js';

interface DecisionPolicies {
  mark(decision: object, policies: readonly string[]): void;
  get(decision: unknown): readonly string[] | undefined;
}

const KEY = Symbol.for('warrant.decision-policies.v1');
let table: Readonly<DecisionPolicies> | undefined;

function shared(): Readonly<DecisionPolicies> {
  table ??= processGlobal(KEY, () => {
    const marks = new WeakMap<object, readonly string[]>();
    return {
      mark: (decision: object, policies: readonly string[]) => {
        marks.set(decision, Object.freeze([...policies]));
      },
      get: (decision: unknown) =>
        typeof decision === 'object' && decision !== null ? marks.get(decision) : undefined,
    };
  });
  return table;
}

/** Marks a decision object with the ids of the policies that determined it, in text order. */
export function markDecisionPolicies(decision: object, policies: readonly string[]): void {
  shared().mark(decision, policies);
}

/** The policies a decision object was marked with; undefined for any unmarked answer. */
export function decisionPolicies(decision: unknown): readonly string[] | undefined {
  // Nothing marked yet in this process: no table to ask (the common path, no policy authorizer).
  if (table === undefined && Reflect.getOwnPropertyDescriptor(globalThis, KEY) === undefined)
    return undefined;
  return shared().get(decision);
}
