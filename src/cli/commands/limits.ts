/**
 * `warrant limits`: the limit counters of a store, what each caller, tenant or limit used in its
 * window now (docs/guide/limits.md, "Limits", docs/api.md "runtime.listLimits"); with `--limits`,
 * their max.
 */
import type { LimitsView } from '../../index.js';
import { answerText, valueAnswer } from '../../json/answer.js';
import { formatTable } from '../format-table.js';
import { parseCommand, text } from '../parse.js';
import { formatWindow } from '../../limits/window-text.js';
import { createProgramRuntime, DEFAULT_STORE } from '../program-runtime.js';
import { shownText } from '../terminal-text.js';
import { UsageError } from '../usage-error.js';
import { writeOut } from '../output.js';

export const limitsHelp = `Usage: warrant limits [options] [--json]

Lists the limit counters of the store: for each limit and caller, tenant or all (per), what
was used in the limit's window ending now. Counters with nothing in their window are not shown.

Options:
  --store <store>       the store (default: $WARRANT_STORE when set, else ${DEFAULT_STORE})
  --limits <file.json>  the limits (as given to serve, run or mcp): shows each one's max
  --json                print { limits, counters } as JSON on stdout
  -h, --help            show this help`;

function listLines(view: LimitsView): string {
  if (view.counters.length === 0) return 'No limit counters in their window.';
  return formatTable(
    ['LIMIT', 'PER', 'TENANT', 'CALLER', 'USED', 'MAX', 'WINDOW'],
    view.counters.map((counter) => [
      shownText(counter.limit),
      counter.per,
      shownText(counter.tenant ?? ''),
      // A per-actor counter's id (the actor's, or a caller's that acted alone) in the same column.
      shownText(counter.caller ?? counter.actor ?? ''),
      String(counter.used),
      counter.max === undefined ? '' : String(counter.max),
      // The format of a limit denial's reason (`1m`, `90s`), so the two read alike.
      formatWindow(counter.windowMs),
    ]),
  );
}

export async function limitsCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    store: { type: 'string' },
    limits: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    writeOut(`${limitsHelp}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unknown arguments: ${positionals.join(' ')}`);
  const store = text(values, 'store');
  const limits = text(values, 'limits');
  const runtime = await createProgramRuntime({
    ...(store !== undefined && { store }),
    ...(limits !== undefined && { limits }),
  });
  try {
    const view = await runtime.listLimits();
    if (values.json) writeOut(`${answerText(valueAnswer(view), 2)}\n`);
    else writeOut(`${listLines(view)}\n`);
    return 0;
  } finally {
    await runtime.close();
  }
}
