/**
 * The runtime's `logger` option as capabilities and middleware see it (docs/api.md, "Loggers").
 * Each call is read by its argument types: a string first is `(message, fields)`, an
 * object first is pino's `(fields, message)`. The call reaches the given logger in that logger's
 * own order, so fields are kept either way: pino loggers (pino marks them, and their children,
 * with its `pino.serializers` symbol) take fields first, every other logger message first
 * (docs/decisions.md, "Loggers").
 */
import type { ExecutionLogger, FieldsFirstLogger } from './capability.js';

type LogMethod = (...args: unknown[]) => unknown;

const PINO_MARK = Symbol.for('pino.serializers');

function isFields(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** True for a logger called fields first: pino's. */
export function takesFieldsFirst(logger: object): boolean {
  return PINO_MARK in logger;
}

/**
 * One method of the context logger: reads `read()` (the given logger's method of that level) at
 * each call, pino swapping its level methods when the level changes, and calls it on the logger.
 */
function forward(
  logger: object,
  fieldsFirst: boolean,
  read: () => LogMethod,
): (...args: unknown[]) => void {
  return (...args) => {
    const [first, second] = args;
    let given = args;
    if (typeof first === 'string') {
      // Message first; a pino logger gets the fields first, or drops them.
      if (fieldsFirst && isFields(second)) given = [second, first];
    } else if (isFields(first) && !fieldsFirst) {
      // pino's order, for a logger that takes the message first.
      given = [typeof second === 'string' ? second : '', first];
    }
    Reflect.apply(read(), logger, given);
  };
}

/** `logger` behind a context logger taking both orders. */
export function hostLogger(logger: ExecutionLogger | FieldsFirstLogger): ExecutionLogger {
  const fieldsFirst = takesFieldsFirst(logger);
  const methods = logger as unknown as Record<keyof ExecutionLogger, LogMethod>;
  return Object.freeze({
    debug: forward(logger, fieldsFirst, () => methods.debug),
    info: forward(logger, fieldsFirst, () => methods.info),
    warn: forward(logger, fieldsFirst, () => methods.warn),
    error: forward(logger, fieldsFirst, () => methods.error),
  });
}

function stepMethod(
  logger: object,
  read: () => LogMethod,
  jobId: string,
  stepId: string,
): (...args: unknown[]) => void {
  return (...args) => {
    const [first, second] = args;
    let given = args;
    if (typeof first === 'string') {
      const fields = isFields(second) ? { ...second, jobId, stepId } : { jobId, stepId };
      given = [first, fields, ...args.slice(2)];
    } else if (isFields(first)) {
      given = [{ ...first, jobId, stepId }, ...args.slice(1)];
    }
    Reflect.apply(read(), logger, given);
  };
}

/**
 * The `context.logger` of one step (docs/api.md, "Loggers"): every line carries the step's
 * `jobId` and `stepId`, over any the capability gave, in either call order. Built per step only
 * when a logger is configured: with the default silent logger the executor passes it as is.
 */
export function stepLogger(
  logger: ExecutionLogger,
  jobId: string,
  stepId: string,
): ExecutionLogger {
  const methods = logger as unknown as Record<keyof ExecutionLogger, LogMethod>;
  return Object.freeze({
    debug: stepMethod(logger, () => methods.debug, jobId, stepId),
    info: stepMethod(logger, () => methods.info, jobId, stepId),
    warn: stepMethod(logger, () => methods.warn, jobId, stepId),
    error: stepMethod(logger, () => methods.error, jobId, stepId),
  });
}
