/**
 * The plan versions Warrant knows and the default a runtime admits (docs/api.md, "Plan version
 * 2.0"): the spec's format stays `'1.0'` unless the host lists `'2.0'` in `planVersions`.
 */
import type { PlanVersion } from './execution-plan.js';

export const KNOWN_PLAN_VERSIONS: readonly PlanVersion[] = Object.freeze(['1.0', '2.0']);
export const DEFAULT_PLAN_VERSIONS: readonly PlanVersion[] = Object.freeze(['1.0']);

/** How admission names the versions a plan may have: `"1.0"`, or `one of "1.0", "2.0"`. */
export function versionsText(versions: readonly PlanVersion[]): string {
  const quoted = versions.map((version) => `"${version}"`);
  return quoted.length === 1 ? (quoted[0] as string) : `one of ${quoted.join(', ')}`;
}
