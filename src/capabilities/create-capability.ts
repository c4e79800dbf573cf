import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { describeValue, quoteText } from '../errors/describe-value.js';
import { isArrayValue, readArray, readField } from '../values/hostile-reads.js';
import type {
  Capability,
  CapabilityDefinition,
  CapabilityDefinitionBase,
  CapabilityExecution,
  CapabilityInputField,
  CapabilityInputSchema,
  CapabilityInputSchemaFor,
  CapabilityMiddleware,
  ExecutionContext,
  InferCapabilityInput,
} from './capability.js';
import type { CompiledSchema } from './input-schema.js';
import { checkCapabilityShape, RETRY_KEY, COST_KEY, TIMEOUT_KEY } from './capability-shape.js';
import { checkCost, checkRetry, checkTimeout } from './declared-options.js';
import { LifecycleLoggingMiddleware, silentLogger } from './lifecycle-logging-middleware.js';
import { TimeoutMiddleware } from './timeout-middleware.js';

const lifecycleLogging = new LifecycleLoggingMiddleware();

const ignore = (): void => {};

/** Most middleware layers one capability may have. */
const MAX_MIDDLEWARE = 1_000;

/** A middleware and the execute function taken from it when the capability was defined. */
interface Layer {
  readonly target: CapabilityMiddleware;
  readonly execute: CapabilityMiddleware['execute'];
}

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.CAPABILITY_DEFINITION_INVALID, message);
}

/**
 * Builds a Capability from a definition. The middleware chain is composed here, once
 * (docs/decisions.md, "House rules"): outermost lifecycle logging, then the timeout, then user middleware.
 *
 * The input type comes from `inputSchema` (a Standard Schema's output type, or the types of a
 * field record written inline); an input type given explicitly (`createCapability<Input,
 * Output>`) must agree with the schema (docs/api.md, "createCapability").
 * @throws TypeError with code CAPABILITY_DEFINITION_INVALID when the definition is malformed.
 */
export function createCapability<const Schema extends CapabilityInputSchema, Output = unknown>(
  definition: CapabilityDefinitionBase<InferCapabilityInput<Schema>, Output> & {
    readonly inputSchema: Schema;
  },
): Capability<InferCapabilityInput<Schema>, Output>;
export function createCapability<Input = unknown, Output = unknown>(
  definition: CapabilityDefinitionBase<Input, Output> & {
    readonly inputSchema?: NoInfer<CapabilityInputSchemaFor<Input>>;
  },
): Capability<Input, Output>;
export function createCapability<Input, Output>(
  definition: CapabilityDefinition<Input, Output>,
): Capability<Input, Output> {
  const shape = checkCapabilityShape(definition, 'createCapability()');
  const label = `createCapability() ${quoteText(shape.name)}`;
  // Each field is read once (checkCapabilityShape read the shared ones); a throwing getter or
  // proxy trap is CAPABILITY_DEFINITION_INVALID naming the field.
  const read = (target: object, key: string, what: string): unknown =>
    readField(target, key, (problem) => invalid(`${label}: ${what} ${problem}`));
  const timeoutMs = checkTimeout(read(definition, 'timeoutMs', 'timeoutMs'), label);
  const retry = checkRetry(read(definition, 'retry', 'retry'), label, read);
  const cost = checkCost(read(definition, 'cost', 'cost'), label);
  const middleware = read(definition, 'middleware', 'middleware');
  const logging = read(definition, 'lifecycleLogging', 'lifecycleLogging');
  if (logging !== undefined && typeof logging !== 'boolean') {
    throw invalid(`${label}: lifecycleLogging must be a boolean, got ${describeValue(logging)}`);
  }
  const middlewareFail = (problem: string) => invalid(`${label}: middleware ${problem}`);
  if (middleware !== undefined && !isArrayValue(middleware, middlewareFail)) {
    throw invalid(`${label}: middleware must be an array`);
  }
  // Each layer's execute function is taken once, here, and called with the layer as `this`.
  const layers: Layer[] = [];
  const addLayer = (target: CapabilityMiddleware): void => {
    layers.push({ target, execute: target.execute });
  };
  if (logging !== false) addLayer(lifecycleLogging);
  if (timeoutMs !== undefined) addLayer(new TimeoutMiddleware(timeoutMs));
  const userLayers =
    middleware === undefined
      ? []
      : readArray(middleware as unknown[], MAX_MIDDLEWARE, middlewareFail);
  for (const [index, layer] of userLayers.entries()) {
    const execute =
      typeof layer === 'object' && layer !== null
        ? read(layer, 'execute', `middleware[${index}].execute`)
        : undefined;
    if (typeof execute !== 'function') {
      throw invalid(
        `${label}: middleware[${index}] must be an object with an execute(execution, next) method`,
      );
    }
    layers.push({
      target: layer as CapabilityMiddleware,
      execute: execute as CapabilityMiddleware['execute'],
    });
  }
  const run = shape.execute as unknown as CapabilityDefinition<Input, Output>['execute'];
  const identity = Object.freeze({ name: shape.name, version: shape.version, risk: shape.risk });

  const calledTwice = () =>
    createError(
      Error,
      ErrorCode.MIDDLEWARE_NEXT_CALLED_TWICE,
      `Middleware of capability ${quoteText(shape.name)} called next() more than once`,
    );

  // A second next() runs nothing and rejects; once the middleware has settled, the step fails
  // if next() was called twice meanwhile. A later call changes nothing: the step has recorded
  // its outcome. Every promise next() returns is marked handled, so a middleware that drops one
  // cannot end the process with an unhandled rejection (docs/decisions.md, "Capabilities").
  const dispatch = async (index: number, execution: CapabilityExecution): Promise<unknown> => {
    const layer = layers[index];
    if (layer === undefined) {
      return run.call(definition, { input: execution.input as Input, context: execution.context });
    }
    let calls = 0;
    const next = (override?: CapabilityExecution): Promise<unknown> => {
      calls += 1;
      const inner =
        calls === 1 ? dispatch(index + 1, override ?? execution) : Promise.reject(calledTwice());
      inner.catch(ignore);
      return inner;
    };
    const result: unknown = await Reflect.apply(layer.execute, layer.target, [execution, next]);
    if (calls > 1) throw calledTwice();
    return result;
  };

  const direct = (input: Input, context: ExecutionContext): Promise<Output> => {
    try {
      return Promise.resolve(run.call(definition, { input, context }));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  };

  const capability: Capability<Input, Output> = {
    name: shape.name,
    version: shape.version,
    description: shape.description,
    risk: shape.risk,
    // A Standard Schema is handed on as given (use() reads it again); a field record as a copy.
    inputSchema:
      (shape.standard?.schema as CapabilityInputSchema | undefined) ?? fieldRecord(shape.schema),
    ...(shape.outputSchema !== undefined && { outputSchema: shape.outputSchema }),
    // With no middleware the definition's execute is called directly: the same promise, with
    // no async frame or execution object between (docs/decisions.md, "Allocation on the hot path").
    execute:
      layers.length === 0
        ? direct
        : (input: Input, context: ExecutionContext): Promise<Output> => {
            // Lifecycle logging with the silent logger only calls next(): it is skipped, the
            // same call without its async frames (docs/decisions.md, "The record nearly free").
            if (logging !== false && context.logger === silentLogger) {
              return layers.length === 1
                ? direct(input, context)
                : (dispatch(1, { input, context, capability: identity }) as Promise<Output>);
            }
            return dispatch(0, { input, context, capability: identity }) as Promise<Output>;
          },
  };
  // Called with the definition as `this`, as execute is (docs/api.md, "Prepared effects").
  const prepare = shape.prepare;
  if (prepare !== undefined) {
    (capability as { prepare?: Capability<Input, Output>['prepare'] }).prepare = (input, context) =>
      Reflect.apply(prepare, definition, [input, context]) as unknown;
  }
  if (timeoutMs !== undefined) {
    Object.defineProperty(capability, TIMEOUT_KEY, { value: timeoutMs, enumerable: false });
  }
  if (retry !== undefined) {
    Object.defineProperty(capability, RETRY_KEY, { value: retry, enumerable: false });
  }
  if (cost !== undefined) {
    Object.defineProperty(capability, COST_KEY, { value: cost, enumerable: false });
  }
  return Object.freeze(capability);
}

/** A frozen field record from a compiled one. */
function fieldRecord(schema: CompiledSchema): Readonly<Record<string, CapabilityInputField>> {
  const record: Record<string, CapabilityInputField> = {};
  for (const field of schema) {
    record[field.key] = Object.freeze({
      type: field.type,
      required: field.required,
      description: field.description,
    });
  }
  return Object.freeze(record);
}
