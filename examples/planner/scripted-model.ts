// An AI SDK language model that answers with plans written in advance (the AI SDK's own mock,
// from 'ai/test'): the planner runs without a network or a key. Replace it with a real model to
// plan for real (README.md next to this file).
import { MockLanguageModelV4 } from 'ai/test';

/** A model whose n-th answer is the n-th of `answers` (the last one again after that). */
export function scriptedModel(answers: readonly unknown[]): MockLanguageModelV4 {
  let call = 0;
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const answer = answers[Math.min(call++, answers.length - 1)];
      return {
        content: [{ type: 'text', text: JSON.stringify(answer) }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 0, text: 0, reasoning: 0 },
        },
        warnings: [],
      };
    },
  });
}

/** The plan a model writes for "remind customer c-42 of their open invoice". */
export const REMINDER_PLAN = {
  version: '2.0',
  goal: 'Remind customer c-42 of their open invoice',
  steps: [
    { id: 'customer', capability: 'crm.customer', input: { customerId: 'c-42' } },
    { id: 'invoice', capability: 'billing.invoice', input: { customerId: 'c-42' } },
    {
      id: 'remind',
      capability: 'mail.send',
      input: {
        to: { $ref: 'steps.customer.result.email' },
        subject: 'Your open invoice',
        body: 'A friendly reminder that your invoice is open.',
      },
    },
  ],
};
