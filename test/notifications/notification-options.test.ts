// The `notifications` and `notificationDelivery` runtime options (docs/api.md, "Notifications"):
// anything malformed is RUNTIME_OPTIONS_INVALID, and no message shows a secret.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorRuntime, type OperatorRuntimeOptions } from '../../src/index.js';
import {
  checkNotificationsOption,
  destinationLabel,
} from '../../src/notifications/notification-options.js';
import { newSecret } from '../support/webhook-receiver.js';

const secret = newSecret();

function refused(options: unknown, message: RegExp): void {
  assert.throws(
    () => new OperatorRuntime(options as OperatorRuntimeOptions),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, 'RUNTIME_OPTIONS_INVALID');
      assert.match(error.message, message);
      assert.ok(!error.message.includes(secret.slice(6)), 'no secret in the message');
      return true;
    },
  );
}

describe('notifications option', () => {
  it('accepts http(s) destinations with a whsec_ secret, all events by default', () => {
    const config = checkNotificationsOption(
      [
        { url: 'http://127.0.0.1:9/hook', secret },
        { url: 'https://chat.example/x', format: 'slack' },
      ],
      undefined,
    );
    assert.equal(config?.destinations.length, 2);
    assert.equal(config?.destinations[0]?.key?.length, 24);
    assert.equal(config?.destinations[0]?.events.size, 7);
    assert.equal(config?.destinations[1]?.key, undefined);
    assert.equal(config?.delivery.attempts, 15);
    assert.equal(checkNotificationsOption(undefined, undefined), undefined);
  });

  it('names the store destination by origin and digest, never by the whole URL', () => {
    const label = destinationLabel('https://hooks.example/T000/SECRET-PATH');
    assert.match(label, /^https:\/\/hooks\.example#[0-9a-f]{16}$/);
  });

  it('refuses what is malformed, with RUNTIME_OPTIONS_INVALID', () => {
    refused({ notifications: {} }, /options\.notifications must be an array/);
    for (const approveFlags of ['--module x', [''], [1], Array.from({ length: 65 }, () => 'x')])
      refused(
        { notifications: [{ url: 'http://x/', format: 'slack', approveFlags }] },
        /notifications\[0\]\.approveFlags must be an array of at most 64 non-empty strings/,
      );
    refused(
      { notifications: [{ url: 'ftp://x/', secret }] },
      /notifications\[0\]\.url must be an http/,
    );
    refused(
      { notifications: [{ url: 'http://x/' }] },
      /notifications\[0\]\.secret must be a Standard Webhooks secret/,
    );
    refused({ notifications: [{ url: 'http://x/', secret: secret.slice(6) }] }, /whsec_/);
    refused({ notifications: [{ url: 'http://x/', secret: 'whsec_c2hvcnQ=' }] }, /24 to 64/);
    refused(
      { notifications: [{ url: 'http://x/', secret, events: ['job.created'] }] },
      /events: "job\.created" is not one of/,
    );
    refused({ notifications: [{ url: 'http://x/', secret, format: 'teams' }] }, /format must be/);
    refused(
      { notifications: [{ url: 'http://x/', secret, allowPrivate: 'yes' }] },
      /notifications\[0\]\.allowPrivate must be a boolean, got "yes"/,
    );
    refused(
      {
        notifications: [
          { url: 'http://x/', secret },
          { url: 'http://x/', secret },
        ],
      },
      /the same url twice/,
    );
    refused(
      { notificationDelivery: { attempts: 0 } },
      /notificationDelivery\.attempts must be a positive integer/,
    );
  });

  it('is accepted with a PostgreSQL store (it has an outbox; the pool connects on first use)', async () => {
    const runtime = new OperatorRuntime({
      store: 'postgres://127.0.0.1:9/db',
      notifications: [{ url: 'http://x/', secret }],
    });
    await runtime.close();
  });
});
