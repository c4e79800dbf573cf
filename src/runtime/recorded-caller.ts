import { isRecordedAsIs } from '../callers/caller-snapshot.js';
import type { ExecutionCaller } from '../callers/execution-caller.js';
import { toJsonSafe } from '../json/json-value.js';

/**
 * The caller as the job record keeps it: a snapshot is deeply frozen JSON data, so the record
 * shares it (one object for every job of that caller) unless it holds a -0, which the record's
 * encoding writes as 0 (docs/decisions.md, "Callers"). It lives in runtime/, not callers/,
 * because the record's encoding is jobs/' and jobs/ itself names the caller's type.
 */
export function recordedCaller(caller: ExecutionCaller | undefined): unknown {
  if (caller === undefined || isRecordedAsIs(caller)) return caller;
  return toJsonSafe(caller, 'caller');
}
