/**
 * `warrant policy schema` and `warrant policy validate <file.cedar>` (docs/api.md, "Policy as
 * code: Cedar"): the Cedar schema of what the program registers (built-ins plus --module
 * files), and the check of a policy file against it.
 */
import { writeErr, writeOut } from '../output.js';
import { cedarSchema, validateCedarPolicies } from '../../index.js';
import { parseCommand } from '../parse.js';
import { readPolicyFile } from '../policy-file.js';
import {
  createProgramRuntime,
  runtimeOptionsHelpOf,
  runtimeOptionsOf,
  type RuntimeFlags,
} from '../program-runtime.js';
import { printable } from '../run-progress.js';
import { UsageError } from '../usage-error.js';

/** What registers capabilities, so what the schema is made of: policy's only options. */
const POLICY_OPTIONS = ['module', 'fs-root', 'mcp-server', 'mcp-tool'] as const;

export const policyHelp = `Usage: warrant policy schema [options]
       warrant policy validate <file.cedar> [options]

schema prints the Cedar schema of the registered capabilities (built-ins plus --module files):
principals Warrant::Caller and Warrant::Anonymous, an action per capability in its risk group
(Warrant::Action::"risk:<risk>"), resource Warrant::Capability, and each action's context with
the input, always present, typed by its input schema (number fields are left out: a number
reaches Cedar as a Long, a decimal or a Warrant::Number). validate checks the policies of a
file against that schema, strictly.
Nothing runs, so no store is opened; the options are those that register capabilities.
Exit codes: 0 printed, or the policies are valid; 1 validate found problems (one line each:
<file>:<line>: policy <id>: <problem>); 2 bad usage (options, files, a bad module).

Options:
${runtimeOptionsHelpOf(POLICY_OPTIONS)}
  -h, --help            show this help`;

export async function policyCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, runtimeOptionsOf(POLICY_OPTIONS));
  if (values.help) {
    console.log(policyHelp);
    return 0;
  }
  const [action, ...rest] = positionals;
  if (action === 'schema' && rest.length === 0) {
    const runtime = await createProgramRuntime({ ...(values as RuntimeFlags), store: 'memory' });
    await runtime.close();
    writeOut(cedarSchema());
    return 0;
  }
  if (action === 'validate' && rest.length === 1) {
    const file = rest[0] as string;
    const text = await readPolicyFile(file, file);
    const runtime = await createProgramRuntime({ ...(values as RuntimeFlags), store: 'memory' });
    await runtime.close();
    const problems = validateCedarPolicies(text);
    for (const { line, policy, message } of problems) {
      const where = line === undefined ? file : `${file}:${line}`;
      const which = policy === undefined ? '' : ` policy ${policy}:`;
      writeErr(`${where}:${which} ${printable(message, 500)}\n`);
    }
    if (problems.length > 0) return 1;
    writeErr(`${file}: valid\n`);
    return 0;
  }
  throw new UsageError(
    'expected "warrant policy schema" or "warrant policy validate <file.cedar>"',
  );
}
