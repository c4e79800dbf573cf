/**
 * OpenTelemetry spans of jobs and steps (docs/api.md, "OpenTelemetry"): a `warrant.job` span per
 * run of a job, child of the context active when it was asked for, and an `execute_tool
 * <capability>` span per step that runs, child of the job span. Inputs and results are never
 * attributes. Without a registered tracer provider (or when the job is not sampled) a job costs
 * one no-op span and nothing per step (docs/decisions.md, "Telemetry").
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Context, Span, Tracer, TracerProvider } from '@opentelemetry/api';
import { actorsOf } from '../callers/actor-chain.js';
import type { Job, JobStep } from '../jobs/job.js';
import type { StepEnd } from '../jobs/transitions.js';
import type { AdmittedStep } from '../plan/admission.js';

/** The tracer's name and version: the package's (its version stays 0.2.0; a test compares). */
export const TRACER_NAME = 'warrant';
export const TRACER_VERSION = '0.2.0';

/**
 * `error.type` of a step that did not complete (docs/api.md, "OpenTelemetry"); a job that failed
 * carries its failing step's. A thrown store fault is its error `code` (`JOB_STORE_FAILED`).
 */
export type StepErrorType =
  'denied' | 'authorizer_error' | 'invalid_decision' | 'input_rejected' | 'capability_error';

/** `@opentelemetry/api`, once loaded; undefined before, or when it cannot be loaded. */
let otel: typeof OtelApi | undefined;
let loading: Promise<unknown> | undefined;
let loaded = false;

/**
 * Loads `@opentelemetry/api` on first use, not when the package is imported (docs/decisions.md,
 * "Light import"): returns undefined once it is loaded (or failed to load: then no job has
 * spans), else the promise to wait for, once, before the first job starts. Waiting keeps the
 * caller's active context (it travels with the promise).
 */
export function telemetryLoading(): Promise<unknown> | undefined {
  if (loaded) return undefined;
  loading ??= import('@opentelemetry/api')
    .then(
      (api) => {
        otel = api;
      },
      () => {},
    )
    .then(() => {
      loaded = true;
    });
  return loading;
}

let knownProvider: TracerProvider | undefined;
let knownTracer: Tracer | undefined;

/**
 * The global provider's tracer, asked for again only when the global provider changes: one
 * registered after import is used, and asking costs nothing per job.
 */
function tracer(api: typeof OtelApi): Tracer {
  const provider = api.trace.getTracerProvider();
  if (provider !== knownProvider || knownTracer === undefined) {
    knownTracer = provider.getTracer(TRACER_NAME, TRACER_VERSION);
    knownProvider = provider;
  }
  return knownTracer;
}

/** The `error.type` of a thrown value: its string `code`, else its class name. */
function thrownType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return error instanceof Error ? error.name : '_OTHER';
}

/** `SpanStatusCode.ERROR` and `SpanKind.INTERNAL` of the API (fixed numbers of its enums). */
const STATUS_ERROR = 2;
const KIND_INTERNAL = 0;

/** ERROR status with `error.type` only: messages may quote inputs or results. */
function fail(span: Span, type: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: STATUS_ERROR });
}

/** What a step's span says of its decision: made in this run, or none. */
interface StepDecided {
  readonly outcome: string;
  readonly reason: string | undefined;
  readonly digest: string;
  readonly policies: readonly string[] | undefined;
  readonly limit: string | undefined;
  /** The kind of grant that covered the decision (docs/api.md, "Plan warrants"). */
  readonly grant: string | undefined;
}

function decidedOf(end: StepEnd, record: JobStep | undefined): StepDecided | undefined {
  if ('decided' in end && end.decided !== undefined) {
    const { outcome, reason, recorded, policies, limit, approval } = end.decided;
    return { outcome, reason, digest: recorded.digest, policies, limit, grant: approval?.kind };
  }
  // Allowed steps record their decision when they start; a decision left on the record by an
  // earlier run (an approval request) is not this run's.
  if (record?.status !== 'running' || record.decision === undefined) return undefined;
  const { outcome, reason, inputDigest, policies, limit, approval } = record.decision;
  return { outcome, reason, digest: inputDigest, policies, limit, grant: approval?.kind };
}

function stepErrorType(end: StepEnd, decided: StepDecided | undefined): StepErrorType | undefined {
  if (end.status === 'denied') return 'denied';
  if (end.status !== 'failed') return undefined;
  if (decided === undefined) return 'input_rejected';
  if (decided.outcome === 'error') return 'authorizer_error';
  if (decided.outcome === 'invalid') return 'invalid_decision';
  return 'capability_error';
}

/** The spans of one run of one job (a first run, or a run resumed after an approval). */
export class JobTelemetry {
  readonly #api: typeof OtelApi;
  readonly #tracer: Tracer;
  readonly #job: Job;
  readonly #span: Span;
  readonly #context: Context;
  /** `error.type` of the step that failed the job. */
  #failure: string | undefined;

  constructor(api: typeof OtelApi, tracer: Tracer, job: Job, span: Span, spanContext: Context) {
    this.#api = api;
    this.#tracer = tracer;
    this.#job = job;
    this.#span = span;
    this.#context = spanContext;
  }

  /** Runs the job inside its span's context; ends the span when the run settles. */
  job(run: () => Promise<Job>): Promise<Job> {
    return this.#api.context.with(this.#context, run).then(
      (job) => {
        this.#span.setAttribute('warrant.job.status', job.status);
        if (job.status === 'failed') fail(this.#span, this.#failure ?? '_OTHER');
        this.#span.end();
        return job;
      },
      (error: unknown) => {
        fail(this.#span, thrownType(error));
        this.#span.end();
        throw error;
      },
    );
  }

  /** Runs one step inside its own span's context; ends the span with how the step ended. */
  step(step: AdmittedStep, run: () => Promise<StepEnd>): Promise<StepEnd> {
    const span = this.#startStep(step);
    if (span === undefined) return run();
    return this.#api.context.with(this.#api.trace.setSpan(this.#context, span), run).then(
      (end) => {
        this.#endStep(span, step.index, end);
        return end;
      },
      (error: unknown) => {
        fail(span, thrownType(error));
        span.end();
        throw error;
      },
    );
  }

  #startStep(step: AdmittedStep): Span | undefined {
    const { capability } = step;
    const jobId = this.#job.id;
    try {
      return this.#tracer.startSpan(
        `execute_tool ${capability.name}`,
        {
          kind: KIND_INTERNAL,
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': capability.name,
            'gen_ai.tool.call.id': `${jobId}:${step.id}`,
            'warrant.job.id': jobId,
            'warrant.step.id': step.id,
            'warrant.capability.version': capability.version,
            'warrant.capability.risk': capability.risk,
          },
        },
        this.#context,
      );
    } catch {
      // As at the job's start: a tracer that throws records nothing, and the step runs.
      return undefined;
    }
  }

  #endStep(span: Span, index: number, end: StepEnd): void {
    const decided = decidedOf(end, this.#job.steps[index]);
    span.setAttribute('warrant.step.status', end.status);
    if (decided !== undefined) {
      span.setAttribute('warrant.decision.outcome', decided.outcome);
      if (decided.reason !== undefined)
        span.setAttribute('warrant.decision.reason', decided.reason);
      span.setAttribute('warrant.input.digest', decided.digest);
      // A policy authorizer's determining policies (docs/api.md, "Policy as code: Cedar").
      if (decided.policies !== undefined)
        span.setAttribute('warrant.decision.policies', [...decided.policies]);
      // The limit that denied the step (docs/api.md, "Limits").
      if (decided.limit !== undefined) span.setAttribute('warrant.decision.limit', decided.limit);
      // A step that ran under a plan grant (docs/api.md, "Plan warrants").
      if (decided.grant !== undefined) span.setAttribute('warrant.approval.kind', decided.grant);
    }
    const errorType = stepErrorType(end, decided);
    if (errorType !== undefined) {
      fail(span, errorType);
      this.#failure = errorType;
    }
    span.end();
  }
}

/**
 * The job span's attributes at its start: the job id, and who it runs for (docs/api.md,
 * "OpenTelemetry"): the subject's id, and when an actor acts for it the actor's id and every
 * actor's, who acts now first.
 */
function jobAttributes(job: Job): Attributes {
  const attributes: Attributes = { 'warrant.job.id': job.id };
  const subject = job.caller?.id;
  if (typeof subject === 'string') attributes['warrant.subject.id'] = subject;
  const actors = actorsOf(job.caller).map((actor) => actor.id);
  if (actors.length > 0) {
    attributes['warrant.actor.id'] = actors[0] as string;
    attributes['warrant.actor.chain'] = actors;
  }
  return attributes;
}

/**
 * Starts the span of a run of `job`, child of the active context, or returns undefined when
 * nothing records it (no provider registered: the API's no-op span; or not sampled): then the
 * run does no span work at all.
 */
export function startJobTelemetry(job: Job): JobTelemetry | undefined {
  const api = otel;
  if (api === undefined) return undefined;
  const parent = api.context.active();
  const jobTracer = tracer(api);
  let span: Span;
  try {
    span = jobTracer.startSpan(
      'warrant.job',
      { kind: KIND_INTERNAL, attributes: jobAttributes(job) },
      parent,
    );
  } catch {
    // A tracer that throws records nothing; the job runs as without one.
    return undefined;
  }
  if (!span.isRecording()) {
    span.end();
    return undefined;
  }
  return new JobTelemetry(api, jobTracer, job, span, api.trace.setSpan(parent, span));
}
