// "Did you mean ...?" for an unknown capability (issue 19 item 5): the closest registered name
// by edit distance, only when close, with bounded work.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, createCapability, isPlanAdmissionError } from '../../src/index.js';
import {
  MAX_COMPARED_NAMES,
  MAX_SUGGESTIONS,
  editDistance,
  nameSuggester,
  suggestName,
} from '../../src/plan/suggest-name.js';

describe('suggestName', () => {
  it('measures edits, a swap of two neighbours counting one', () => {
    assert.equal(editDistance('ticket.gte', 'ticket.get', 3), 1);
    assert.equal(editDistance('fs.raed', 'fs.read', 3), 1);
    assert.equal(editDistance('kitten', 'sitting', 5), 3);
    assert.equal(editDistance('', 'abc', 5), 3);
    assert.equal(editDistance('abcdefgh', 'zzzzzzzz', 2), 3, 'stops past the limit');
  });

  it('suggests the closest registered name, only when it is close', () => {
    const names = ['ticket.list', 'ticket.get', 'ticket.create', 'fs.read'];
    assert.equal(suggestName('ticket.gte', names), 'ticket.get');
    assert.equal(suggestName('tickets.get', names), 'ticket.get');
    assert.equal(suggestName('Ticket.Get', names), 'ticket.get');
    assert.equal(suggestName('fs.raed', names), 'fs.read');
    assert.equal(suggestName('mail.send', names), undefined);
    assert.equal(suggestName('nope', names), undefined);
    assert.equal(suggestName('', names), undefined);
  });

  it('bounds the work: long names are not compared, and only the first names are', () => {
    assert.equal(suggestName(`${'a'.repeat(200)}b`, [`${'a'.repeat(200)}c`]), undefined);
    const many = Array.from({ length: MAX_COMPARED_NAMES }, (_, index) => `far.away.${index}`);
    assert.equal(suggestName('ticket.gte', [...many, 'ticket.get']), undefined);
    assert.equal(suggestName('ticket.gte', [...many.slice(1), 'ticket.get']), 'ticket.get');
  });

  it('reads the names once, answers each unknown name once, and stops after MAX_SUGGESTIONS', () => {
    let reads = 0;
    const suggest = nameSuggester(() => {
      reads += 1;
      return ['ticket.get'];
    });
    assert.equal(suggest('ticket.gte'), 'ticket.get');
    assert.equal(suggest('ticket.gte'), 'ticket.get');
    for (let index = 1; index < MAX_SUGGESTIONS; index += 1) suggest(`other.${index}`);
    assert.equal(suggest('ticket.gett'), undefined, 'past the cap: no more searches');
    assert.equal(reads, 1);
  });
});

describe('admission of an unknown capability', () => {
  it('names the closest registered capability in the issue, and nothing when none is close', async () => {
    const runtime = new OperatorRuntime();
    runtime.use({
      manifest: { name: 'tickets', version: '1.0.0', capabilities: ['ticket.get'] },
      capabilities: [
        createCapability({
          name: 'ticket.get',
          version: '1.0.0',
          description: 'Reads a ticket',
          risk: 'read',
          execute: async () => ({}),
        }),
      ],
    });
    const refusal = await runtime
      .executePlan({
        version: '1.0',
        steps: [
          { id: 'a', capability: 'ticket.gte' },
          { id: 'b', capability: 'mail.send' },
        ],
      })
      .then(
        () => assert.fail('the plan was admitted'),
        (error: unknown) => error,
      );
    assert.ok(isPlanAdmissionError(refusal));
    assert.deepEqual(
      refusal.issues.map((issue) => [issue.code, issue.message]),
      [
        [
          'UNKNOWN_CAPABILITY',
          'steps[0] "a": capability "ticket.gte" is not registered; did you mean "ticket.get"?',
        ],
        ['UNKNOWN_CAPABILITY', 'steps[1] "b": capability "mail.send" is not registered'],
      ],
    );
    await runtime.close();
  });
});
