/**
 * The self-approval rule (docs/api.md, "Approvals"), checked before the approver policy is asked:
 * nobody who acted in a job decides its requests. With an actor chain (docs/api.md, "Callers:
 * acting for someone") every actor acted, and the subject did not: the subject may approve what
 * was done on its behalf. Without one, the caller who submitted the job acted. An approver is
 * judged by every id of its own chain too, so an actor of the job cannot approve through another
 * caller it acts for (docs/decisions.md, "Acting for someone (issue 50)").
 */
import { actorsOf, chainIds } from '../callers/actor-chain.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';

/** Who of the job's chain the approver is, when the rule refuses it. */
export interface SelfApproval {
  /** `actor`: an actor of the job's caller; `submitter`: the caller itself, no actor having acted. */
  readonly as: 'actor' | 'submitter';
  readonly id: string;
}

/** The ids that acted in a job whose recorded caller is `recorded`. */
function actedIds(recorded: ExecutionCaller | undefined): string[] {
  const actors = actorsOf(recorded).map((actor) => actor.id);
  if (actors.length > 0) return actors;
  return typeof recorded?.id === 'string' ? [recorded.id] : [];
}

/**
 * Undefined when `approver` may be asked about a request of a job recorded with `recorded` as
 * its caller; else who of the job's chain it is.
 */
export function selfApproval(
  approver: ExecutionCaller,
  recorded: ExecutionCaller | undefined,
): SelfApproval | undefined {
  const acted = actedIds(recorded);
  if (acted.length === 0) return undefined;
  const as = actorsOf(recorded).length > 0 ? 'actor' : 'submitter';
  for (const id of chainIds(approver)) if (acted.includes(id)) return { as, id };
  return undefined;
}

/** The refusal's message: who of the job's chain the approver is. */
export function selfApprovalText(self: SelfApproval, job: { readonly id: string }): string {
  return self.as === 'actor'
    ? `${JSON.stringify(self.id)} acted in job ${JSON.stringify(job.id)} and cannot decide its approval`
    : `The caller who submitted job ${JSON.stringify(job.id)} cannot decide its approval`;
}
