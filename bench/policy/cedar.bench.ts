// Cedar decisions (docs/api.md, "Policy as code: Cedar"): Warrant's cedarAuthorizer against a bare
// cedar-wasm statefulIsAuthorized call on the same request, in the same run, for 50 policies; and
// a repeated request, answered from the decision cache. Run: npm run bench bench/policy/cedar.bench.ts.
import { cpus } from 'node:os';
import { createRequire } from 'node:module';
import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';
import { cedarAuthorizer, type CapabilityAuthorizationContext } from '../../src/index.js';
import { fmt, interleave, machine, median, percentile } from '../support/measure.js';

const require = createRequire(import.meta.url);
const cedar = require('@cedar-policy/cedar-wasm/nodejs') as typeof CedarWasm;

const rounds = Number(process.env.BENCH_ROUNDS ?? 15);
const operations = Number(process.env.BENCH_OPERATIONS ?? 500);
const POLICIES = 50;

// 50 policies of the kinds a host writes: scoped permits, input conditions, risk-group forbids.
const policies = Array.from({ length: POLICIES }, (_, index) => {
  const id = `@id("p${index}") `;
  switch (index % 5) {
    case 0:
      return `${id}permit(principal, action == Warrant::Action::"mail.send${index}", resource) when { principal.scopes.contains("mail") };`;
    case 1:
      return `${id}forbid(principal, action, resource) when { context has input && context.input has amount && context.input.amount > ${1000 + index} };`;
    case 2:
      return `${id}permit(principal, action in Warrant::Action::"risk:read", resource) when { context.jobId != "blocked-${index}" };`;
    case 3:
      return `${id}forbid(principal, action in Warrant::Action::"risk:destructive", resource) unless { principal has roles && principal.roles.contains("admin${index}") };`;
    default:
      return `${id}permit(principal, action == Warrant::Action::"mail.send", resource) when { context has input && context.input has to && context.input.to like "*@example${index}.com" };`;
  }
}).join('\n');

const capability = { name: 'mail.send', version: '1.0.0', risk: 'write' } as const;
const caller = { id: 'alice', scopes: ['mail', 'tickets'] };
const input = { to: 'bob@example4.com', subject: 'hello', amount: 12, tags: ['a', 'b'] };
const inputDigest = `sha256:${'0'.repeat(64)}`;
const authorizer = cedarAuthorizer({ policies, name: 'bench' });

// The bare call: the same policies preparsed once, the same request with static entities built
// once (what Warrant builds per capability), only the job id new per call.
const preparsed = cedar.preparsePolicySet('bench-bare', {
  staticPolicies: Object.fromEntries(
    (cedar.policySetTextToParts(policies) as { policies: string[] }).policies.map((text, index) => [
      `bare${index}`,
      text,
    ]),
  ),
});
if (preparsed.type !== 'success') throw new Error('bench policies do not parse');
const entities = [
  { uid: { type: 'Warrant::Caller', id: 'alice' }, attrs: { scopes: caller.scopes }, parents: [] },
  {
    uid: { type: 'Warrant::Action', id: 'mail.send' },
    attrs: {},
    parents: [{ type: 'Warrant::Action', id: 'risk:write' }],
  },
  { uid: { type: 'Warrant::Action', id: 'risk:write' }, attrs: {}, parents: [] },
  {
    uid: { type: 'Warrant::Capability', id: 'mail.send@1.0.0' },
    attrs: { ...capability },
    parents: [],
  },
];
let job = 0;
function bare(jobId: string): unknown {
  const answer = cedar.statefulIsAuthorized({
    principal: { type: 'Warrant::Caller', id: 'alice' },
    action: { type: 'Warrant::Action', id: 'mail.send' },
    resource: { type: 'Warrant::Capability', id: 'mail.send@1.0.0' },
    context: { input, inputDigest, jobId, stepId: 'send', approved: false },
    entities: entities as never,
    preparsedPolicySetId: 'bench-bare',
  });
  if (answer.type !== 'success') throw new Error('bare call failed');
  return answer.response.decision;
}

const asked = (jobId: string): CapabilityAuthorizationContext => ({
  jobId,
  stepId: 'send',
  capability,
  input,
  caller,
  inputDigest,
});
const repeated = asked('job-repeated');

// Same answers, or the comparison means nothing.
const check = authorizer.authorize(asked('job-check')) as { decision: string };
if (check.decision !== bare('job-check')) throw new Error('the two paths disagree');

const results = await interleave(
  [
    { name: 'bare statefulIsAuthorized', run: () => bare(`job-${++job}`) },
    {
      name: 'cedarAuthorizer (new request)',
      run: () => authorizer.authorize(asked(`job-${++job}`)),
    },
    {
      name: 'cedarAuthorizer (repeated request, cached)',
      run: () => authorizer.authorize(repeated),
    },
  ],
  rounds,
  operations,
);
const base = median(results[0]?.samples ?? []);
console.log(`### Cedar decisions (${POLICIES} policies)\n`);
console.log(
  `${machine()}, ${cpus().length} cores, ${rounds} interleaved rounds of ${operations}; times in µs per decision (median of rounds; p99 of rounds).\n`,
);
console.log('| subject | median µs | p99 µs | ratio to bare |');
console.log('| --- | ---: | ---: | ---: |');
for (const result of results) {
  const med = median(result.samples);
  console.log(
    `| ${result.name} | ${fmt(med)} | ${fmt(percentile(result.samples, 99))} | ${fmt(med / base, 2)}x |`,
  );
}
