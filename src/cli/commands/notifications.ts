/**
 * `warrant notifications`: the notifications of a store not delivered yet, pending, failed or
 * dropped (docs/guide/notifications.md, "Notifications", docs/api.md "runtime.listNotifications").
 */
import type { NotificationRecord } from '../../index.js';
import { answerText, valueAnswer } from '../../json/answer.js';
import { formatTable } from '../format-table.js';
import { parseCommand, text } from '../parse.js';
import { createProgramRuntime, DEFAULT_STORE } from '../program-runtime.js';
import { shownText } from '../terminal-text.js';
import { UsageError } from '../usage-error.js';
import { writeOut } from '../output.js';

export const notificationsHelp = `Usage: warrant notifications [options] [--json]

Lists the notifications of the store not delivered yet, oldest first: pending (still being
tried), failed (after the last attempt) and dropped (the outbox of their destination was full).
Delivered ones are gone from the outbox.

Options:
  --store <store>       the store (default: $WARRANT_STORE when set, else ${DEFAULT_STORE})
  --limit <n>           at most n (default 100)
  --json                print them as JSON on stdout (the body included)
  -h, --help            show this help`;

function listLines(rows: readonly NotificationRecord[]): string {
  if (rows.length === 0) return 'No notifications pending or failed.';
  return formatTable(
    ['STATUS', 'TYPE', 'JOB', 'ATTEMPTS', 'DESTINATION', 'ERROR'],
    rows.map((row) => [
      row.status,
      row.type,
      shownText(row.jobId),
      String(row.attempts),
      shownText(row.destination),
      shownText(row.error ?? '', 120),
    ]),
  );
}

export async function notificationsCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    store: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    console.log(notificationsHelp);
    return 0;
  }
  if (positionals.length > 0 && !(positionals.length === 1 && positionals[0] === 'list'))
    throw new UsageError(`unknown arguments: ${positionals.join(' ')}`);
  const limitText = text(values, 'limit') ?? '100';
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || !Number.isSafeInteger(limit))
    throw new UsageError(`--limit must be a whole number, got ${JSON.stringify(limitText)}`);
  const store = text(values, 'store');
  const runtime = await createProgramRuntime(store === undefined ? {} : { store });
  try {
    const rows = await runtime.listNotifications({ limit });
    if (values.json) writeOut(`${answerText(valueAnswer(rows), 2)}\n`);
    else writeOut(`${listLines(rows)}\n`);
    return 0;
  } finally {
    await runtime.close();
  }
}
