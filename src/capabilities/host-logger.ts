/**
 * The runtime's `logger` option as capabilities and middleware see it (docs/api.md, "Loggers").
 * Each call is read by its argument types: a string first is Part I's `(message, fields)`, an
 * object first is pino's `(fields, message)`. The call reaches the given logger in that logger's
 * own order, so fields are kept either way: pino loggers (pino marks them, and their children,
 * with its `pino.serializers` symbol) take fields first, every other logger message first
 * (docs/decisions.md, "Loggers").
 */
import type { ExecutionLogger, FieldsFirstLogger } from './capability.js';

type Level = keyof ExecutionLogger;
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
 * `logger` behind a context logger taking both orders. Methods are read at each call (pino swaps
 * its level methods when the level changes) and called on the logger itself.
 */
export function hostLogger(logger: ExecutionLogger | FieldsFirstLogger): ExecutionLogger {
  const fieldsFirst = takesFieldsFirst(logger);
  const target = logger as unknown as Record<Level, LogMethod>;
  const method =
    (level: Level) =>
    (...args: unknown[]): void => {
      const [first, second] = args;
      if (typeof first === 'string') {
        // Part I's order; a pino logger gets the fields first, or drops them.
        if (fieldsFirst && isFields(second)) target[level](second, first);
        else Reflect.apply(target[level], logger, args);
      } else if (isFields(first) && !fieldsFirst) {
        // pino's order, for a logger that takes the message first.
        target[level](typeof second === 'string' ? second : '', first);
      } else {
        Reflect.apply(target[level], logger, args);
      }
    };
  return Object.freeze({
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
  });
}
