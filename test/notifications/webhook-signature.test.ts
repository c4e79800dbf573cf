// Standard Webhooks signing with Node's crypto (docs/api.md, "Notifications"): the same bytes as
// the `standardwebhooks` library signs, and verified by it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { secretKey } from '../../src/notifications/notification-options.js';
import { webhookHeaders, webhookSignature } from '../../src/notifications/webhook-signature.js';
import { newSecret } from '../support/webhook-receiver.js';

describe('webhookSignature', () => {
  it('signs the same bytes as the standardwebhooks library, which verifies it', () => {
    const secret = newSecret();
    const key = secretKey(secret, 'secret');
    const body = JSON.stringify({ type: 'job.completed', jobId: 'j', at: 'now', data: {} });
    const timestamp = Math.floor(Date.now() / 1000);
    const ours = webhookSignature(key, 'msg_1', timestamp, body);
    assert.equal(ours, new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body));
    const headers = webhookHeaders(key, 'msg_1', timestamp, body);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(newSecret()).verify(body, headers));
    assert.throws(() => new Webhook(secret).verify(`${body} `, headers));
  });

  it('sends no signature header without a key (an unsigned Slack destination)', () => {
    assert.deepEqual(Object.keys(webhookHeaders(undefined, 'msg_1', 1, '{}')), [
      'content-type',
      'webhook-id',
      'webhook-timestamp',
    ]);
  });
});
