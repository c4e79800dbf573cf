import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  answerText,
  CLI_ANSWER,
  errorText,
  jobAnswer,
  jobListAnswer,
  refusalAnswer,
  REMOTE_ANSWER,
  valueAnswer,
} from '../../src/json/answer.js';

const TWO_LINES = 'boom\n    at secret (/srv/app.js:1:2)';

/** A recorded job with an error at every place an answer cuts one. */
function job(): object {
  return {
    id: 'job-1',
    status: 'failed',
    error: TWO_LINES,
    result: 5n,
    steps: [{ id: 's', error: TWO_LINES, decision: { outcome: 'deny', reason: TWO_LINES } }],
    events: [{ type: 'capability.failed', data: { error: TWO_LINES, reason: TWO_LINES } }],
  };
}

describe('the answer encoder', () => {
  it('cuts every error and denial reason of a job to one line in the remote style', () => {
    assert.deepEqual(jobAnswer(job(), REMOTE_ANSWER), {
      id: 'job-1',
      status: 'failed',
      error: 'boom',
      result: '5',
      steps: [{ id: 's', error: 'boom', decision: { outcome: 'deny', reason: 'boom' } }],
      events: [{ type: 'capability.failed', data: { error: 'boom', reason: 'boom' } }],
    });
  });

  it('keeps a job as recorded, only JSON-safe, in the CLI style', () => {
    const answer = jobAnswer(job(), CLI_ANSWER) as { error: string; result: string };
    assert.equal(answer.error, TWO_LINES);
    assert.equal(answer.result, '5');
  });

  it('encodes a list of jobs in each style', () => {
    const remote = jobListAnswer([job()], REMOTE_ANSWER) as { error: string }[];
    assert.equal(remote[0]?.error, 'boom');
    const recorded = jobListAnswer([job()], CLI_ANSWER) as { error: string }[];
    assert.equal(recorded[0]?.error, TWO_LINES);
  });

  it('answers a refusal with its code only in the CLI style, in this key order', () => {
    const refusal = { message: `refused\nmore`, code: 'PLAN_ADMISSION_REJECTED', issues: [{}] };
    assert.equal(
      answerText(refusalAnswer(refusal, REMOTE_ANSWER)),
      '{"error":"refused","issues":[{}]}',
    );
    assert.equal(
      answerText(refusalAnswer(refusal, CLI_ANSWER)),
      '{"error":"refused\\nmore","code":"PLAN_ADMISSION_REJECTED","issues":[{}]}',
    );
  });

  it('cuts an error text in the remote style only', () => {
    assert.equal(errorText(TWO_LINES, REMOTE_ANSWER), 'boom');
    assert.equal(errorText(TWO_LINES, CLI_ANSWER), TWO_LINES);
  });

  it('writes answer text as JSON.stringify does, null for what JSON drops', () => {
    assert.equal(answerText(valueAnswer({ a: [1n] }), 2), '{\n  "a": [\n    "1"\n  ]\n}');
    assert.equal(answerText(undefined), 'null');
  });
});
