// Typed inputs, as docs/guide/capabilities.md shows them: a zod schema and a field record side by side. The
// input type of `execute` comes from the schema, with no cast and no generic. The lines marked
// expect-error comments are what must NOT compile (test/capabilities/input-types.test.ts runs tsc on
// this file); run it with `npx tsx examples/typed-inputs.ts`.
import * as v from 'valibot';
import { z } from 'zod';
import {
  OperatorRuntime,
  createCapability,
  defineModule,
  type Capability,
  type CapabilityDefinition,
} from 'warrant';

// A Standard Schema (zod 4): `input` is the schema's OUTPUT type, defaults and transforms applied.
const search = createCapability({
  name: 'ticket.search',
  version: '1.0.0',
  description: 'Searches tickets',
  risk: 'read',
  lifecycleLogging: false,
  inputSchema: z.object({ query: z.string().min(1), limit: z.number().int().default(10) }),
  execute: ({ input }) => `${input.query.toUpperCase()} (first ${input.limit.toFixed(0)})`,
});

// A field record written inline: required fields are plain, optional ones `?` (and may be null).
const get = createCapability({
  name: 'ticket.get',
  version: '1.0.0',
  description: 'Finds a ticket by id',
  risk: 'read',
  lifecycleLogging: false,
  inputSchema: {
    id: { type: 'string', required: true, description: 'Ticket id' },
    verbose: { type: 'boolean', required: false, description: 'Include the history' },
  },
  execute: ({ input }) => ({ id: input.id.toUpperCase(), verbose: input.verbose ?? false }),
});

// valibot works the same way.
const close = createCapability({
  name: 'ticket.close',
  version: '1.0.0',
  description: 'Closes a ticket',
  risk: 'write',
  lifecycleLogging: false,
  inputSchema: v.object({ id: v.string(), reason: v.optional(v.string(), 'done') }),
  execute: ({ input }) => `${input.id} closed: ${input.reason}`,
});

// The inferred types, checked exactly.
type Equals<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type InputOf<C> = C extends Capability<infer Input, unknown> ? Input : never;
export const searchInput: Equals<InputOf<typeof search>, { query: string; limit: number }> = true;
export const getInput: Equals<
  InputOf<typeof get>,
  { id: string; verbose?: boolean | null | undefined }
> = true;
export const closeInput: Equals<InputOf<typeof close>, { id: string; reason: string }> = true;

// An explicit input type must agree with the schema.
export const agreeing = createCapability<{ id: string }, number>({
  name: 'typed.agreeing',
  version: '1.0.0',
  description: 'explicit types that match the schema',
  risk: 'read',
  inputSchema: { id: { type: 'string', required: true, description: 'id' } },
  execute: ({ input }) => input.id.length,
});

// A definition typed beforehand is checked the same way, and createCapability takes it as is.
const echoDefinition: CapabilityDefinition<{ text: string }, string> = {
  name: 'typed.echo',
  version: '1.0.0',
  description: 'a definition written as a typed constant',
  risk: 'read',
  inputSchema: { text: { type: 'string', required: true, description: 'text' } },
  execute: ({ input }) => input.text,
};
export const echo = createCapability(echoDefinition);

export const wrongDefinition: CapabilityDefinition<{ count: number }> = {
  name: 'typed.wrong-definition',
  version: '1.0.0',
  description: 'the type says number, the schema says string',
  risk: 'read',
  // @ts-expect-error -- the field record checks strings; the definition's type claims a number.
  inputSchema: { count: { type: 'string', required: true, description: 'count' } },
  execute: ({ input }) => input.count.toFixed(0),
};

export const wrongFieldGeneric = createCapability<{ id: number }>({
  name: 'typed.wrong-field-generic',
  version: '1.0.0',
  description: 'the generic says number, the schema says string',
  risk: 'read',
  // @ts-expect-error -- the field record checks strings; the generic claims a number.
  inputSchema: { id: { type: 'string', required: true, description: 'id' } },
  execute: ({ input }) => input.id.toFixed(0),
});

export const wrongZodGeneric = createCapability<{ id: number }>({
  name: 'typed.wrong-zod-generic',
  version: '1.0.0',
  description: 'the generic says number, the schema outputs a string',
  risk: 'read',
  // @ts-expect-error -- the schema's output is { id: string }.
  inputSchema: z.object({ id: z.string() }),
  execute: ({ input }) => input.id.toFixed(0),
});

export const unknownField = createCapability({
  name: 'typed.unknown-field',
  version: '1.0.0',
  description: 'reads a field the schema does not have',
  risk: 'read',
  inputSchema: { id: { type: 'string', required: true, description: 'id' } },
  // @ts-expect-error -- `name` is not an input field.
  execute: ({ input }) => input.name,
});

export const optionalField = createCapability({
  name: 'typed.optional-field',
  version: '1.0.0',
  description: 'uses an optional field as if it were always there',
  risk: 'read',
  inputSchema: { limit: { type: 'number', required: false, description: 'at most' } },
  // @ts-expect-error -- `limit` may be missing.
  execute: ({ input }) => input.limit.toFixed(0),
});

const runtime = new OperatorRuntime();
runtime.use(defineModule('tickets', '1.0.0', [search, get, close]));
const job = await runtime.executePlan({
  version: '1.0',
  steps: [
    { id: 'search', capability: 'ticket.search', input: { query: 'printer' } },
    { id: 'get', capability: 'ticket.get', input: { id: 't-1' } },
  ],
});
console.log(job.status, JSON.stringify(job.steps.map((step) => step.result)));
await runtime.close();
