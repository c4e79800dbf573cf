import { createHmac } from 'node:crypto';

/**
 * The `webhook-signature` header of the Standard Webhooks specification: `v1,` and the base64
 * HMAC-SHA256, under the secret's decoded bytes, of `${id}.${timestamp}.${body}` (timestamp in
 * whole seconds), so any Standard Webhooks library verifies it.
 */
export function webhookSignature(key: Buffer, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of a signed delivery (`key` undefined: an unsigned one, Slack's). */
export function webhookHeaders(
  key: Buffer | undefined,
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
  };
  if (key !== undefined) headers['webhook-signature'] = webhookSignature(key, id, timestamp, body);
  return headers;
}
