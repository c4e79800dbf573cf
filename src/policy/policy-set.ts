/**
 * Cedar policy text, parsed once (docs/api.md, "Policy as code: Cedar"): each policy's id (its
 * `@id("…")` annotation, else `policy<N>`, N its 0-based position in the text), its effect and
 * whether it asks for approval (`@warrant("require_approval")`). Text that does not parse, a
 * template, an unknown `@warrant` value or a duplicate id refuses the whole text.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import type { Cedar } from './cedar-wasm.cjs';

type DetailedError = { message: string; sourceLocations?: { start: number }[] };

export interface ParsedPolicy {
  readonly id: string;
  readonly position: number;
  readonly effect: 'permit' | 'forbid';
  readonly requiresApproval: boolean;
}

export interface ParsedPolicySet {
  /** In text order. */
  readonly policies: readonly ParsedPolicy[];
  readonly byId: ReadonlyMap<string, ParsedPolicy>;
  /** The policies by id, as Cedar is given them. */
  readonly texts: Readonly<Record<string, string>>;
}

const APPROVAL = 'require_approval';

/** The 1-based line of a UTF-8 byte offset into `text` (Cedar counts bytes). */
export function lineAt(text: string, byteOffset: number): number {
  const before = Buffer.from(text, 'utf8').subarray(0, byteOffset).toString('utf8');
  let line = 1;
  for (let index = 0; index < before.length; index++) if (before.charCodeAt(index) === 10) line++;
  return line;
}

/** The first source offset Cedar gives for an error, looking into related errors too. */
function offsetOf(error: DetailedError & { related?: DetailedError[] }): number | undefined {
  const own = error.sourceLocations?.[0]?.start;
  if (own !== undefined) return own;
  for (const related of error.related ?? []) {
    const found = offsetOf(related);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** One line naming where and why Cedar refused the text. */
export function describeCedarError(text: string, error: DetailedError): string {
  const offset = offsetOf(error);
  const where = offset === undefined ? '' : ` at line ${lineAt(text, offset)}`;
  return `${where}: ${error.message.split('\n')[0] ?? ''}`;
}

function invalid(message: string): Error {
  return createError(Error, ErrorCode.CEDAR_POLICY_INVALID, message);
}

/**
 * Cedar names the policies of a text `policy0`, `policy1`, … and hands them back sorted by that
 * id as a string (`policy10` before `policy2`): the same sort restores their positions.
 */
function positionalIds(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index).sort((a, b) =>
    `policy${a}` < `policy${b}` ? -1 : `policy${a}` > `policy${b}` ? 1 : 0,
  );
}

/** Parses policy text; throws CEDAR_POLICY_INVALID naming the line or the policy at fault. */
export function parsePolicySet(cedar: Cedar, text: string): ParsedPolicySet {
  const checked = cedar.checkParsePolicySet({ staticPolicies: text });
  if (checked.type === 'failure') {
    const first = checked.errors[0] as DetailedError;
    throw invalid(`Cedar policy text does not parse${describeCedarError(text, first)}`);
  }
  const parts = cedar.policySetTextToParts(text);
  if (parts.type === 'failure') {
    throw invalid(
      `Cedar policy text does not parse${describeCedarError(text, parts.errors[0] as DetailedError)}`,
    );
  }
  if (parts.policy_templates.length > 0)
    throw invalid('Cedar policy templates are not supported: write static policies');
  const order = positionalIds(parts.policies.length);
  const policies: ParsedPolicy[] = new Array<ParsedPolicy>(parts.policies.length);
  const texts: Record<string, string> = Object.create(null) as Record<string, string>;
  const byId = new Map<string, ParsedPolicy>();
  parts.policies.forEach((policyText, sorted) => {
    const position = order[sorted] as number;
    const json = cedar.policyToJson(policyText);
    if (json.type === 'failure') throw invalid(`Cedar policy ${position} cannot be read`);
    const annotations = json.json.annotations ?? {};
    const warrant = annotations['warrant'];
    if (warrant !== undefined && warrant !== APPROVAL)
      throw invalid(
        `Policy ${position} has @warrant(${JSON.stringify(warrant)}): the one known value is "${APPROVAL}"`,
      );
    const id = annotations['id'] ?? `policy${position}`;
    const policy: ParsedPolicy = Object.freeze({
      id,
      position,
      effect: json.json.effect,
      requiresApproval: warrant === APPROVAL,
    });
    policies[position] = policy;
  });
  for (const policy of policies) {
    const earlier = byId.get(policy.id);
    if (earlier !== undefined)
      throw invalid(
        `Duplicate policy id ${JSON.stringify(policy.id)}: policies ${earlier.position} and ${policy.position}`,
      );
    byId.set(policy.id, policy);
  }
  parts.policies.forEach((policyText, sorted) => {
    texts[(policies[order[sorted] as number] as ParsedPolicy).id] = policyText;
  });
  return { policies: Object.freeze(policies), byId, texts };
}
