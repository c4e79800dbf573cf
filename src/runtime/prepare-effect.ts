/**
 * Prepared effects (docs/api.md, "Prepared effects"): a capability with `prepare` says what the
 * invocation will do before the authorizer is asked, and the authorizer decides on that. Here,
 * for one step: `prepare(input, context)` runs, bounded by the capability's `timeoutMs`; its
 * value must be in the 2.0 value domain and at most 64 KiB of canonical JSON; it is deep-frozen,
 * digested (`sha256:` of its RFC 8785 JSON) and handed to the authorizer with the input. A
 * throw, a rejection, a time-out or a bad value fails the step (EFFECT_PREPARE_FAILED) and
 * nothing is invoked; a refusal of the runtime's own address guard (EFFECT_REFUSED) denies it,
 * the effect recorded. After an approval, the effect prepared again must be the one approved
 * (docs/decisions.md, "An approval covers one effect").
 */
import type { CapabilityAuthorizationContext } from '../authorization/authorizer.js';
import type { PrepareContext } from '../capabilities/capability.js';
import { describeThrown } from '../errors/describe-value.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createError, isIssuedError } from '../errors/warrant-error.js';
import { isoNow } from '../jobs/clock.js';
import type { JobStep } from '../jobs/job.js';
import { recordedAsIs, recordedWithEffect, type RecordedValue } from '../jobs/recorded-value.js';
import type { RecordedAsk, RunningJob, StepEnd } from '../jobs/transitions.js';
import { canonicalJson } from '../json/canonical-json.js';
import type { AdmittedStep } from '../plan/admission.js';
import { copyGoverned, GovernedBudget, type GovernedCopy } from '../plan/governed-value.js';
import { lazyField, setLazyField } from '../values/lazy-field.js';

/** The largest effect: 64 KiB of canonical JSON (UTF-8). */
export const MAX_EFFECT_BYTES = 64 * 1024;

/** Why an effect cannot be used, or the effect as recorded (frozen, digested). */
type Checked =
  | { readonly ok: true; readonly effect: RecordedValue }
  | { readonly ok: false; readonly problem: string };

/** `effect.a.0` for messages. */
function effectField(path: readonly (string | number)[]): string {
  return path.length === 0 ? 'the effect' : `effect.${path.join('.')}`;
}

/**
 * The most bytes of canonical JSON a value walked with `budget` can take: at most 6 a character
 * of its strings and keys (an escape), 26 an edge (a key's quotes and colon, a comma, a number's
 * 24 characters), 2 a container, and 26 for a value that is not one.
 */
export function effectBytesAtMost(budget: GovernedBudget): number {
  return 6 * budget.chars + 26 * budget.edges + 2 * budget.containers + 26;
}

/**
 * An effect as the record keeps it: a deep-frozen plain-data copy and the digest of its RFC 8785
 * JSON, or why it cannot be one. Never throws.
 */
export function checkEffect(value: unknown): Checked {
  const budget = new GovernedBudget();
  const copied: GovernedCopy = copyGoverned(value, budget);
  if (!copied.ok) {
    const { path, what } = copied.problem;
    return { ok: false, problem: `${effectField(path)} is ${what}` };
  }
  // An effect well within 64 KiB is not written out here, only when its digest is read.
  if (effectBytesAtMost(budget) <= MAX_EFFECT_BYTES)
    return { ok: true, effect: recordedAsIs(copied.value) };
  let text: string;
  try {
    text = canonicalJson(copied.value);
  } catch (error) {
    return { ok: false, problem: `the effect is not JSON data (${describeThrown(error)})` };
  }
  // A UTF-16 code unit is at most 3 bytes of UTF-8: a short text needs no count.
  const bytes = text.length * 3 <= MAX_EFFECT_BYTES ? 0 : Buffer.byteLength(text);
  if (bytes > MAX_EFFECT_BYTES)
    return {
      ok: false,
      problem: `the effect is ${bytes} bytes of canonical JSON, over ${MAX_EFFECT_BYTES}`,
    };
  // Digested when first read (docs/decisions.md, "The record nearly free"): of this very copy,
  // frozen, so the digest is the one of the text just measured.
  return { ok: true, effect: recordedAsIs(copied.value) };
}

/** What a settled `prepare` gave: its value, or what it threw. */
type Settled = { readonly value: unknown } | { readonly thrown: unknown };

/** A job the runtime may cancel: its controller, made on first use (as the executor's). */
export interface CancelHolder {
  controller: AbortController | undefined;
}

const jobSignal = (control: CancelHolder): AbortSignal =>
  (control.controller ??= new AbortController()).signal;

/** A context's `signal`: the job's, made when first read (src/values/lazy-field.ts). */
const SIGNAL_FIELD = lazyField(jobSignal);

/**
 * Runs `prepare`, bounded by `timeoutMs` when the capability has one; never rejects. A `prepare`
 * that returns a value (not a promise) is settled at once, without a promise or a timer.
 */
function runPrepare(
  step: AdmittedStep,
  asked: CapabilityAuthorizationContext,
  runtimeSignal: AbortSignal,
  control: CancelHolder | undefined,
): Settled | Promise<Settled> {
  const { capability } = step;
  const prepare = capability.prepare as NonNullable<typeof capability.prepare>;
  const timeoutMs = capability.timeoutMs;
  const controller = timeoutMs === undefined ? undefined : new AbortController();
  const context = { jobId: asked.jobId, stepId: asked.stepId, caller: asked.caller } as {
    -readonly [K in keyof PrepareContext]: PrepareContext[K];
  };
  // Without a time-out, the job's AbortController is made only for a prepare that reads it.
  if (controller !== undefined) {
    const outer = control === undefined ? runtimeSignal : jobSignal(control);
    context.signal = AbortSignal.any([outer, controller.signal]);
  } else if (control === undefined) context.signal = runtimeSignal;
  else setLazyField(context, 'signal', SIGNAL_FIELD, control);
  let returned: unknown;
  let then: unknown;
  try {
    returned = Reflect.apply(prepare, capability.target, [asked.input, context]) as unknown;
    // Read once, as a promise's resolution reads it (a getter that throws is a failure).
    then = (returned as { then?: unknown } | null | undefined)?.then;
    if (typeof then !== 'function') return { value: returned };
  } catch (error) {
    return { thrown: error };
  }
  const adopted = new Promise<unknown>((resolve, reject) => {
    Reflect.apply(then as (...args: unknown[]) => unknown, returned, [resolve, reject]);
  });
  const settled = adopted.then(
    (value): Settled => ({ value }),
    (thrown: unknown): Settled => ({ thrown }),
  );
  if (controller === undefined) return settled;
  return new Promise<Settled>((resolve) => {
    const timer = setTimeout(() => {
      const error = createError(
        Error,
        ErrorCode.EFFECT_PREPARE_FAILED,
        `prepare timed out after ${timeoutMs}ms`,
      );
      controller.abort(error);
      resolve({ thrown: error });
    }, timeoutMs);
    void settled.then((outcome) => {
      clearTimeout(timer);
      resolve(outcome);
    });
  });
}

/** The step's failure: nothing was decided, nothing invoked. */
function prepareFailed(problem: string): StepEnd {
  return { status: 'failed', error: `${ErrorCode.EFFECT_PREPARE_FAILED}: ${problem}` };
}

/**
 * A refusal of the address guard (docs/api.md, "Prepared effects"): the step is denied before
 * any authorizer is asked, its effect (the one the guard refused, when it names one) recorded
 * with the denial.
 */
function refused(
  thrown: unknown,
  step: AdmittedStep,
  input: unknown,
  recorded: RecordedValue,
): StepEnd {
  const reason = `${ErrorCode.EFFECT_REFUSED}: ${describeThrown(thrown)}`;
  let ask: RecordedAsk = recorded;
  const descriptor = Object.getOwnPropertyDescriptor(thrown, 'effect');
  if (descriptor !== undefined && 'value' in descriptor) {
    const checked = checkEffect(descriptor.value);
    if (checked.ok)
      ask = { value: recorded.value, digest: recorded.digest, effect: checked.effect };
  }
  return {
    status: 'denied',
    reason,
    risk: step.capability.risk,
    decided: {
      outcome: 'deny',
      reason,
      // No authorizer was asked: the guard refused the effect first.
      authorizer: undefined,
      capabilityVersion: step.capability.version,
      at: isoNow(),
      input,
      recorded: ask,
      resolved: step.references.length > 0,
    },
  };
}

const EFFECT_CHANGED = 'Effect changed since approval was requested';

/**
 * Prepares the effect of one step and puts it on `asked` (the authorizer's context, not frozen
 * yet): the input's record joined by the effect's, or the step's end when it cannot run. With
 * `approved` (the step runs under a granted approval), the effect must have the digest of the
 * one the request recorded, or the step fails (docs/decisions.md, "An approval covers one
 * effect"); a capability without `prepare` then must have had none.
 */
export function prepareEffect(
  running: RunningJob,
  step: AdmittedStep,
  asked: CapabilityAuthorizationContext,
  recorded: RecordedValue,
  signal: AbortSignal,
  control: CancelHolder | undefined,
  approved: boolean,
): RecordedAsk | StepEnd | Promise<RecordedAsk | StepEnd> {
  if (step.capability.prepare === undefined)
    return withEffect(running, step, asked, recorded, undefined, approved);
  const settled = runPrepare(step, asked, signal, control);
  return settled instanceof Promise
    ? settled.then((outcome) => prepared(running, step, asked, recorded, outcome, approved))
    : prepared(running, step, asked, recorded, settled, approved);
}

/** The effect a settled `prepare` gave, checked and put on `asked`; or the step's end. */
function prepared(
  running: RunningJob,
  step: AdmittedStep,
  asked: CapabilityAuthorizationContext,
  recorded: RecordedValue,
  settled: Settled,
  approved: boolean,
): RecordedAsk | StepEnd {
  if ('thrown' in settled) {
    if (isIssuedError(settled.thrown, ErrorCode.EFFECT_REFUSED))
      return refused(settled.thrown, step, asked.input, recorded);
    return prepareFailed(describeThrown(settled.thrown));
  }
  const checked = checkEffect(settled.value);
  if (!checked.ok) return prepareFailed(checked.problem);
  return withEffect(running, step, asked, recorded, checked.effect, approved);
}

/** `recorded` joined by `effect` (held to the approved one when `approved`), on `asked` too. */
function withEffect(
  running: RunningJob,
  step: AdmittedStep,
  asked: CapabilityAuthorizationContext,
  recorded: RecordedValue,
  effect: RecordedValue | undefined,
  approved: boolean,
): RecordedAsk | StepEnd {
  if (approved) {
    const requested = (running.record.steps[step.index] as JobStep).decision?.effectDigest;
    if (requested !== effect?.digest) return { status: 'failed', error: EFFECT_CHANGED };
  }
  if (effect === undefined) return recorded;
  // Its digest is added by the caller, with the input's (setEffectDigestField).
  (asked as { effect?: unknown }).effect = effect.value;
  return recordedWithEffect(recorded, effect);
}
