// Slack messages as delivered (docs/api.md, "Notifications"; docs/decisions.md, "Slack text"):
// a planner's step id and a policy's reason reach a Slack receiver escaped, so none of them can
// mention anyone, link anywhere or forge a line of its own (an `Approve:` line above all), and the
// approve command still names the step exactly when a shell reads it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { OperatorRuntime } from '../../src/index.js';
import { recordingAuthorizer, register } from '../support/runtime-fixtures.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { stepRequests } from '../support/step-requests.js';

const MENTION = '<!channel>';
const LINK = '<https://evil|text>';
const FORGED = 'a\nApprove: curl x | sh';
const OPTION = '--store=/tmp/elsewhere';
const REASON = `${MENTION} ${LINK} & ${FORGED}`;

/** What Slack shows for text escaped as it documents. */
function shown(text: string): string {
  return text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
}

/** The words a shell reads from the approve command's arguments (bash, a real child process). */
function shellWords(argumentsText: string): string[] {
  const output = execFileSync('bash', ['-c', `printf '%s\\0' ${argumentsText}`], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return output.split('\0').slice(0, -1);
}

function textOf(receiver: Receiver, jobId: string): string {
  const delivery = receiver.deliveries.find((d) => shown(String(d.payload.text)).includes(jobId));
  assert.ok(delivery, `a message for ${jobId}`);
  return String(delivery.payload.text);
}

describe('Slack messages, delivered', () => {
  it('escape &, <, > and control characters in every field: no mention, link or forged line', async () => {
    const plain = await startReceiver(undefined);
    const linked = await startReceiver(undefined);
    const runtime = new OperatorRuntime({
      approvals: { approver: { canApprove: () => true } },
      authorizer: recordingAuthorizer(() => ({ decision: 'require_approval', reason: REASON })),
      notifications: [
        { url: plain.url, format: 'slack', events: ['approval.requested'], allowPrivate: true },
        {
          url: linked.url,
          allowPrivate: true,
          format: 'slack',
          events: ['approval.requested'],
          publicUrl: 'https://warrant.example/console',
        },
      ],
      notificationDelivery: { initialDelayMs: 20, maxDelayMs: 100, pollMs: 20 },
    });
    try {
      const [cap] = register(runtime, { execute: () => 1 }) as [string];
      const jobs = new Map<string, string>();
      for (const stepId of [MENTION, LINK, FORGED, OPTION]) {
        const job = await runtime.executePlan({
          version: '1.0',
          goal: `${MENTION} goal`,
          steps: [{ id: stepId, capability: cap, input: {} }],
        });
        assert.equal(job.status, 'awaiting_approval');
        jobs.set(stepId, job.id);
      }
      await plain.until(() => plain.deliveries.length >= jobs.size);
      await linked.until(() => linked.deliveries.length >= jobs.size);

      for (const [stepId, jobId] of jobs) {
        const [request] = stepRequests(await runtime.listApprovals({ jobId }));
        assert.ok(request);
        const digest = request.inputDigest;
        const text = textOf(plain, jobId);
        for (const message of [text, textOf(linked, jobId)]) {
          assert.doesNotMatch(message, /[<>]/, 'no mention or link can open');
          assert.doesNotMatch(message, /&(?!amp;|lt;|gt;)/, 'every & escaped');
          for (const line of message.split('\n'))
            assert.match(
              line,
              /^(Warrant: |Step |Reason: |Approve: |Open: )/,
              `no forged line: ${line}`,
            );
          assert.match(
            message,
            /\nReason: &lt;!channel&gt; &lt;https:\/\/evil\|text&gt; &amp; a\\nApprove: curl x \| sh\n/,
          );
        }
        const lines = text.split('\n');
        assert.deepEqual(lines.slice(0, 2), [
          `Warrant: approval.requested for job ${jobId}`,
          `Step ${shownId(stepId)} (${cap})`,
        ]);
        assert.equal(lines.filter((line) => line.startsWith('Approve: ')).length, 1);
        // The command, as Slack shows it and a shell reads it, names this job and step exactly.
        const command = shown(lines.at(-1) ?? '').slice('Approve: '.length);
        assert.ok(command.startsWith('warrant approvals approve '), command);
        const words = shellWords(command.slice('warrant approvals approve '.length));
        assert.deepEqual(
          words,
          stepId.startsWith('-')
            ? ['--digest', digest, '--', jobId, stepId]
            : [jobId, stepId, '--digest', digest],
        );
        assert.equal(
          textOf(linked, jobId).split('\n').at(-1),
          `Open: https://warrant.example/console/#/jobs/${jobId}`,
        );
      }
    } finally {
      await runtime.close();
    }
  });
});

/** A step id as the message shows it: Slack's escapes, a line feed as `\n`. */
function shownId(stepId: string): string {
  return stepId
    .replaceAll('\n', '\\n')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');
}
