// Peers, the same plans in one process (issue 52, item 6): the bench's `increment` function
// ({ n } -> { n: n + 1 }) run through Warrant and three peers, interleaved in the same rounds
// (bench/support/measure.ts), as (a) one step, (b) a chain of 10 steps, each taking the previous
// step's result, and (c) one step that needs a human approval, approved programmatically at once.
// A direct call of `increment` is the floor.
//
// - Warrant: the in-memory runtime of the package root (src/index.ts), default options, the
//   capability with `lifecycleLogging: false` as bench/runtime/execute.bench.ts; the chain is a
//   1.0 plan with result references. Approval: the `approvals` option and a `write` capability,
//   which the default policy answers `require_approval` for, then `decideApproval`.
// - LangGraph.js: a StateGraph with one node per step, `invoke`. Approval: `interrupt()` in the
//   node, a MemorySaver checkpointer, `Command({ resume })`; the thread is deleted after each run.
// - Mastra: a workflow of `createStep`s (`createWorkflow`, `createRunAsync`, `start`; 0.24 names
//   `createRun` `createRunAsync`). Approval: a step that suspends, then `resume`, which needs
//   storage: a Mastra instance with its InMemoryStore.
// - OpenAI Agents SDK: an Agent with a function tool (`tool({ parameters, execute,
//   needsApproval })`) and a Runner with tracing disabled. Its model is SCRIPTED (a class of the
//   SDK's Model interface, no network, no LLM): it answers with the plan's function calls, one a
//   turn, each from the previous tool output, and then a final message. Its figure is the SDK's
//   tool-running machinery, not a model. Approval: `needsApproval`, `result.state.approve(...)`
//   and running again from that state.
//
// The peers are not dependencies of the package: bench/peers is its own npm package, installed
// here on first run (`npm ci --prefix bench/peers`, bounded). Run: npm run bench (or
// npm run bench -- bench/peers/peers.bench.ts). BENCH_ROUNDS (default 21) and BENCH_OPERATIONS
// (default 500 one-step plans a round; a fifth of that for the chain and the approval).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  OperatorRuntime,
  createCapability,
  type ExecutionPlan,
  type ExecutionStep,
  type Job,
} from '../../src/index.js';
import { fmt, interleave, machine, median, type Subject } from '../support/measure.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 21);
const operations = Number(process.env.BENCH_OPERATIONS ?? 500);
const CHAIN = 10;

// ---- the peers, installed on demand -------------------------------------------------------

const here = fileURLToPath(new URL('.', import.meta.url));
if (!existsSync(join(here, 'node_modules', '.package-lock.json'))) {
  process.stderr.write('bench/peers: installing the peers (npm ci --prefix bench/peers)\n');
  const installed = spawnSync(
    'npm',
    ['ci', '--prefix', here, '--ignore-scripts', '--no-audit', '--no-fund'],
    { stdio: ['ignore', 2, 2], timeout: 600_000 },
  );
  if (installed.status !== 0) {
    process.stderr.write(
      `bench/peers: npm ci failed (${installed.error?.message ?? `status ${installed.status}`})\n`,
    );
    process.exit(1);
  }
}

/** Loads a peer from bench/peers/node_modules; the names are not literals, so the root's type
 *  check neither needs nor sees the peers (they are typed loosely below). */
async function peer<T>(name: string): Promise<T> {
  return (await import(name)) as T;
}

/** A peer package's version, as installed. */
function version(name: string): string {
  const file = join(here, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

interface Count {
  n: number;
}

const increment = ({ n }: Count): Count => ({ n: n + 1 });

function check(what: string, value: unknown, n: number): void {
  if ((value as Partial<Count> | undefined)?.n !== n) {
    throw new Error(`${what}: expected n = ${n}, got ${JSON.stringify(value)}`);
  }
}

// ---- direct -------------------------------------------------------------------------------

async function direct(steps: number): Promise<Count> {
  let value: Count = { n: 0 };
  for (let index = 0; index < steps; index++) value = await increment(value);
  return value;
}

// ---- Warrant ------------------------------------------------------------------------------

const warrant = new OperatorRuntime();
const approving = new OperatorRuntime({ approvals: { approver: { canApprove: () => true } } });
warrant.use({
  manifest: {
    name: 'bench-peers',
    version: '1.0.0',
    capabilities: ['bench.peers.increment', 'bench.peers.approved'],
  },
  capabilities: [
    createCapability({
      name: 'bench.peers.increment',
      version: '1.0.0',
      description: 'adds one',
      risk: 'read',
      lifecycleLogging: false,
      inputSchema: { n: { type: 'number', required: true, description: 'n' } },
      execute: ({ input }) => increment(input as Count),
    }),
    createCapability({
      name: 'bench.peers.approved',
      version: '1.0.0',
      description: 'adds one, once approved',
      risk: 'write',
      lifecycleLogging: false,
      inputSchema: { n: { type: 'number', required: true, description: 'n' } },
      execute: ({ input }) => increment(input as Count),
    }),
  ],
});

function warrantPlan(steps: number, capability: string): ExecutionPlan {
  return {
    version: '1.0',
    steps: Array.from({ length: steps }, (_, index): ExecutionStep => ({
      id: `s${index}`,
      capability,
      input: index === 0 ? { n: 0 } : { n: { $ref: `steps.s${index - 1}.result.n` } },
    })),
  };
}

const lastResult = (job: Job): unknown => job.steps.at(-1)?.result;

async function warrantRun(plan: ExecutionPlan): Promise<unknown> {
  const job = await warrant.executePlan(plan);
  if (job.status !== 'completed') throw new Error(`warrant: job ${job.status}`);
  return lastResult(job);
}

const approvalPlan = warrantPlan(1, 'bench.peers.approved');
async function warrantApproved(): Promise<unknown> {
  const waiting = await approving.executePlan(approvalPlan);
  const step = waiting.steps[0];
  if (waiting.status !== 'awaiting_approval' || step?.decision === undefined) {
    throw new Error(`warrant: expected a pending approval, job ${waiting.status}`);
  }
  const job = await approving.decideApproval({
    jobId: waiting.id,
    stepId: step.id,
    inputDigest: step.decision.inputDigest,
    approver: { id: 'approver' },
    decision: 'approve',
  });
  if (job.status !== 'completed') throw new Error(`warrant: approved job ${job.status}`);
  return lastResult(job);
}

// ---- LangGraph.js -------------------------------------------------------------------------

type Node = (state: Count) => Count;
interface CompiledGraph {
  invoke(input: unknown, config?: unknown): Promise<Count & { __interrupt__?: unknown[] }>;
}
interface GraphBuilder {
  addNode(name: string, node: Node): GraphBuilder;
  addEdge(from: string, to: string): GraphBuilder;
  compile(options?: { checkpointer?: unknown }): CompiledGraph;
}
interface LangGraph {
  StateGraph: new (state: unknown) => GraphBuilder;
  Annotation: (() => unknown) & { Root(fields: Record<string, unknown>): unknown };
  START: string;
  END: string;
  MemorySaver: new () => { deleteThread(threadId: string): Promise<void> };
  interrupt(value: unknown): unknown;
  Command: new (options: { resume: unknown }) => unknown;
}
const langgraph = await peer<LangGraph>('@langchain/langgraph');
const graphState = langgraph.Annotation.Root({ n: langgraph.Annotation() });

function graph(steps: number, node: Node, checkpointer?: unknown): CompiledGraph {
  let builder = new langgraph.StateGraph(graphState);
  for (let index = 0; index < steps; index++) builder = builder.addNode(`s${index}`, node);
  builder = builder.addEdge(langgraph.START, 's0');
  for (let index = 1; index < steps; index++)
    builder = builder.addEdge(`s${index - 1}`, `s${index}`);
  builder = builder.addEdge(`s${steps - 1}`, langgraph.END);
  return builder.compile(checkpointer === undefined ? {} : { checkpointer });
}

const graphs = new Map([1, CHAIN].map((steps) => [steps, graph(steps, increment)]));
const saver = new langgraph.MemorySaver();
const approvalGraph = graph(
  1,
  (state) => {
    if (langgraph.interrupt({ approve: state }) !== true) throw new Error('not approved');
    return increment(state);
  },
  saver,
);
let threads = 0;
async function langgraphApproved(): Promise<unknown> {
  const config = { configurable: { thread_id: `t${threads++}` } };
  const waiting = await approvalGraph.invoke({ n: 0 }, config);
  if (waiting.__interrupt__?.length !== 1) throw new Error('langgraph: no interrupt');
  const done = await approvalGraph.invoke(new langgraph.Command({ resume: true }), config);
  await saver.deleteThread(config.configurable.thread_id);
  return done;
}

// ---- Mastra -------------------------------------------------------------------------------

interface Zod {
  z: {
    object(shape: Record<string, unknown>): unknown;
    number(): unknown;
    boolean(): unknown;
  };
}
interface MastraStepContext {
  inputData: Count;
  resumeData?: { approved?: boolean };
  suspend(payload: unknown): Promise<unknown>;
}
interface MastraResult {
  status: string;
  result?: unknown;
}
interface MastraRun {
  start(options: { inputData: Count }): Promise<MastraResult>;
  resume(options: { step: string; resumeData: unknown }): Promise<MastraResult>;
}
interface MastraWorkflow {
  then(step: unknown): MastraWorkflow;
  commit(): MastraWorkflow;
  createRunAsync(): Promise<MastraRun>;
}
interface MastraWorkflows {
  createWorkflow(options: {
    id: string;
    inputSchema: unknown;
    outputSchema: unknown;
  }): MastraWorkflow;
  createStep(options: {
    id: string;
    inputSchema: unknown;
    outputSchema: unknown;
    resumeSchema?: unknown;
    execute(context: MastraStepContext): Promise<Count | undefined>;
  }): unknown;
}
interface MastraCore {
  Mastra: new (options: Record<string, unknown>) => { getWorkflow(id: string): MastraWorkflow };
}
interface MastraStorage {
  InMemoryStore: new () => unknown;
}
const { z } = await peer<Zod>('zod');
const mastraWorkflows = await peer<MastraWorkflows>('@mastra/core/workflows');
const { Mastra } = await peer<MastraCore>('@mastra/core');
const { InMemoryStore } = await peer<MastraStorage>('@mastra/core/storage');
const countSchema = z.object({ n: z.number() });

function workflow(id: string, steps: number): MastraWorkflow {
  let flow = mastraWorkflows.createWorkflow({
    id,
    inputSchema: countSchema,
    outputSchema: countSchema,
  });
  for (let index = 0; index < steps; index++) {
    flow = flow.then(
      mastraWorkflows.createStep({
        id: `s${index}`,
        inputSchema: countSchema,
        outputSchema: countSchema,
        execute: async ({ inputData }) => increment(inputData),
      }),
    );
  }
  return flow.commit();
}

const workflows = new Map([1, CHAIN].map((steps) => [steps, workflow(`chain-${steps}`, steps)]));
async function mastraRun(flow: MastraWorkflow): Promise<unknown> {
  const result = await (await flow.createRunAsync()).start({ inputData: { n: 0 } });
  if (result.status !== 'success') throw new Error(`mastra: ${result.status}`);
  return result.result;
}

const mastra = new Mastra({
  workflows: {
    approval: mastraWorkflows
      .createWorkflow({ id: 'approval', inputSchema: countSchema, outputSchema: countSchema })
      .then(
        mastraWorkflows.createStep({
          id: 'gated',
          inputSchema: countSchema,
          outputSchema: countSchema,
          resumeSchema: z.object({ approved: z.boolean() }),
          execute: async ({ inputData, resumeData, suspend }) => {
            if (resumeData?.approved === true) return increment(inputData);
            await suspend({ approve: inputData });
            return undefined;
          },
        }),
      )
      .commit(),
  },
  storage: new InMemoryStore(),
  logger: false,
});
const approvalWorkflow = mastra.getWorkflow('approval');
async function mastraApproved(): Promise<unknown> {
  const run = await approvalWorkflow.createRunAsync();
  const waiting = await run.start({ inputData: { n: 0 } });
  if (waiting.status !== 'suspended') throw new Error(`mastra: ${waiting.status}`);
  const done = await run.resume({ step: 'gated', resumeData: { approved: true } });
  if (done.status !== 'success') throw new Error(`mastra: resumed ${done.status}`);
  return done.result;
}

// ---- OpenAI Agents SDK (scripted model) ---------------------------------------------------

interface ModelRequest {
  input: string | readonly { type: string; output?: unknown }[];
}
interface RunResult {
  finalOutput?: unknown;
  interruptions: unknown[];
  state: { approve(item: unknown): void };
}
interface Agents {
  Agent: new (options: Record<string, unknown>) => unknown;
  Runner: new (options: Record<string, unknown>) => {
    run(agent: unknown, input: unknown, options?: Record<string, unknown>): Promise<RunResult>;
  };
  tool(options: Record<string, unknown>): unknown;
  Usage: new () => unknown;
  setTracingDisabled(disabled: boolean): void;
}
const agents = await peer<Agents>('@openai/agents');
agents.setTracingDisabled(true);

/** The SDK's Model interface, scripted: one call of `increment` a turn, its argument the last
 *  tool output, until `steps` calls are answered, then a final message with the count. */
class ScriptedModel {
  constructor(private readonly steps: number) {}

  async getResponse(request: ModelRequest): Promise<{ usage: unknown; output: unknown[] }> {
    let answered = 0;
    let n = 0;
    if (typeof request.input !== 'string') {
      for (const item of request.input) {
        if (item.type !== 'function_call_result') continue;
        answered++;
        const output = item.output as string | { text: string };
        n = (JSON.parse(typeof output === 'string' ? output : output.text) as Count).n;
      }
    }
    const output =
      answered < this.steps
        ? {
            type: 'function_call',
            callId: `call-${answered}`,
            name: 'increment',
            arguments: JSON.stringify({ n }),
            status: 'completed',
          }
        : {
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: JSON.stringify({ n }) }],
          };
    return { usage: new agents.Usage(), output: [output] };
  }

  // eslint-disable-next-line require-yield -- never streamed: the runner is called with run()
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the scripted model does not stream');
  }
}

function agent(steps: number, needsApproval: boolean): unknown {
  return new agents.Agent({
    name: `increment-${steps}`,
    instructions: 'Call increment.',
    model: new ScriptedModel(steps),
    tools: [
      agents.tool({
        name: 'increment',
        description: 'adds one',
        parameters: z.object({ n: z.number() }),
        needsApproval,
        execute: async (input: Count) => increment(input),
      }),
    ],
  });
}

const runner = new agents.Runner({ tracingDisabled: true });
const agentsByPlan = new Map([1, CHAIN].map((steps) => [steps, agent(steps, false)]));
const approvalAgent = agent(1, true);
const parsed = (result: RunResult): unknown => JSON.parse(String(result.finalOutput));

async function agentsRun(steps: number): Promise<unknown> {
  return parsed(await runner.run(agentsByPlan.get(steps), 'go', { maxTurns: steps + 1 }));
}
async function agentsApproved(): Promise<unknown> {
  const waiting = await runner.run(approvalAgent, 'go');
  if (waiting.interruptions.length !== 1) throw new Error('agents: no approval asked');
  waiting.state.approve(waiting.interruptions[0]);
  const done = await runner.run(approvalAgent, waiting.state);
  if (done.interruptions.length !== 0) throw new Error('agents: asked again');
  return parsed(done);
}

// ---- the rounds ---------------------------------------------------------------------------

interface Work {
  readonly label: string;
  readonly n: number;
  readonly operations: number;
  readonly subjects: Subject[];
}

const plans = new Map(
  [1, CHAIN].map((steps) => [steps, warrantPlan(steps, 'bench.peers.increment')]),
);
const works: Work[] = [1, CHAIN].map((steps) => ({
  label: steps === 1 ? '1 step' : `${steps}-step chain`,
  n: steps,
  operations: steps === 1 ? operations : Math.max(20, Math.floor(operations / 5)),
  subjects: [
    { name: 'direct call', run: () => direct(steps) },
    { name: 'Warrant', run: () => warrantRun(plans.get(steps) as ExecutionPlan) },
    { name: 'LangGraph.js', run: () => (graphs.get(steps) as CompiledGraph).invoke({ n: 0 }) },
    { name: 'Mastra', run: () => mastraRun(workflows.get(steps) as MastraWorkflow) },
    { name: 'OpenAI Agents SDK', run: () => agentsRun(steps) },
  ],
}));
works.push({
  label: '1 step, approved',
  n: 1,
  operations: Math.max(20, Math.floor(operations / 5)),
  subjects: [
    { name: 'direct call', run: () => direct(1) },
    { name: 'Warrant', run: warrantApproved },
    { name: 'LangGraph.js', run: langgraphApproved },
    { name: 'Mastra', run: mastraApproved },
    { name: 'OpenAI Agents SDK', run: agentsApproved },
  ],
});

// Each subject once, checked, before any round: every one does the work it is said to do.
for (const work of works) {
  for (const subject of work.subjects)
    check(`${work.label}, ${subject.name}`, await subject.run(), work.n);
}

const loadBefore = loadavg();
const rows: string[] = [];
for (const work of works) {
  const results = await interleave(work.subjects, rounds, work.operations);
  const floor = median(results[0]?.samples ?? []);
  const governed = median(results[1]?.samples ?? []);
  for (const result of results) {
    const med = median(result.samples);
    rows.push(
      `| ${work.label} | ${result.name} | ${fmt(med)} | ${fmt(med / governed)}x | ${fmt(med / floor, 0)}x |`,
    );
  }
}
const loadAfter = loadavg();

console.log('### Peers: the same plans\n');
console.log(
  `${machine()}, ${cpus().length} cores, load ${fmt(loadBefore[0] ?? 0)} before and ${fmt(loadAfter[0] ?? 0)} after (1-minute average); ${rounds} interleaved rounds, ${operations} one-step plans a round (${works[1]?.operations} chains or approvals); the sources (src/, through tsx). LangGraph.js ${version('@langchain/langgraph')} (@langchain/core ${version('@langchain/core')}), Mastra ${version('@mastra/core')}, OpenAI Agents SDK ${version('@openai/agents')} with a scripted model (no LLM), zod ${version('zod')}.\n`,
);
console.log('| work | subject | median µs per plan | ratio to Warrant | ratio to direct |');
console.log('| --- | --- | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
await warrant.close();
await approving.close();
