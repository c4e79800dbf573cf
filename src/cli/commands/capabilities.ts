/** `warrant capabilities [name]`: introspection of what the program registers (never authorization). */
import { formatTable } from '../format-table.js';
import { parseCommand } from '../parse.js';
import {
  createProgramRuntime,
  runtimeOptions,
  runtimeOptionsHelp,
  type RuntimeFlags,
} from '../program-runtime.js';
import { UsageError } from '../usage-error.js';
import { writeErr, writeOut } from '../output.js';

export const capabilitiesHelp = `Usage: warrant capabilities [name] [options]

Lists the registered capabilities (built-ins plus --module files), or describes one.
Registration implies no permission. Nothing runs, so no store is opened (--store is ignored).
Exit codes: 0 ok; 1 unknown capability; 2 bad usage (options, files, a bad module).

Options:
${runtimeOptionsHelp}
  --json                print JSON
  --plan-schema         print the JSON Schema (draft 2020-12) of a plan the program admits:
                        one step kind per registered capability, at the newest of
                        --plan-versions (what a planner writes its plans against)
  -h, --help            show this help`;

export async function capabilitiesCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    ...runtimeOptions,
    json: { type: 'boolean' },
    'plan-schema': { type: 'boolean' },
  });
  if (values.help) {
    console.log(capabilitiesHelp);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError('expected at most one capability name');
  if (values['plan-schema'] === true && positionals.length > 0)
    throw new UsageError('--plan-schema takes no capability name');
  const runtime = await createProgramRuntime({ ...(values as RuntimeFlags), store: 'memory' });
  try {
    if (values['plan-schema'] === true) {
      writeOut(`${JSON.stringify(runtime.planSchema(), null, 2)}\n`);
      return 0;
    }
    const name = positionals[0];
    if (name !== undefined) {
      const descriptor = runtime.describeCapability(name);
      if (descriptor === undefined) {
        writeErr(`warrant capabilities: unknown capability ${JSON.stringify(name)}\n`);
        return 1;
      }
      if (values.json) {
        writeOut(`${JSON.stringify(descriptor, null, 2)}\n`);
        return 0;
      }
      const fields = Object.entries(descriptor.inputSchema).map(([key, field]) => [
        key,
        field.type,
        field.required ? 'yes' : 'no',
        field.description,
      ]);
      writeOut(
        `${descriptor.name}@${descriptor.version} (${descriptor.risk}): ${descriptor.description}\n\n${formatTable(['field', 'type', 'required', 'description'], fields)}\n`,
      );
      return 0;
    }
    const all = runtime.listCapabilities();
    if (values.json) {
      writeOut(`${JSON.stringify(all, null, 2)}\n`);
      return 0;
    }
    const rows = all.map((capability) => [
      capability.name,
      capability.version,
      capability.risk,
      capability.description,
    ]);
    writeOut(`${formatTable(['name', 'version', 'risk', 'description'], rows)}\n`);
    return 0;
  } finally {
    await runtime.close();
  }
}
