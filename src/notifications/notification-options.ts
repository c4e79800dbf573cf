/**
 * The `notifications` and `notificationDelivery` runtime options (docs/api.md, "Notifications"),
 * checked once: anything malformed is RUNTIME_OPTIONS_INVALID. A secret never appears in a
 * message.
 */
import { createHash } from 'node:crypto';
import { ErrorCode } from '../errors/error-codes.js';
import { describeValue } from '../errors/describe-value.js';
import { createError } from '../errors/warrant-error.js';
import { readField } from '../values/hostile-reads.js';

/** The event types a notification is sent for, in the order of docs/api.md. */
export const NOTIFICATION_EVENTS = Object.freeze([
  'approval.requested',
  'approval.granted',
  'approval.rejected',
  'job.completed',
  'job.failed',
  'job.cancelled',
  'step.interrupted',
] as const);

export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** One receiver of `notifications`. */
export interface NotificationDestination {
  /**
   * An `http:` or `https:` URL. Its host is resolved at each delivery and the request goes to
   * those addresses only; loopback, private, link-local and metadata ones need `allowPrivate`.
   */
  url: string;
  /** Let the URL reach loopback, private, link-local, unique-local and metadata addresses. */
  allowPrivate?: boolean;
  /** A Standard Webhooks secret, `whsec_<base64>`; required unless `format` is `'slack'`. */
  secret?: string;
  /** The event types sent (default all). */
  events?: readonly NotificationEvent[];
  /** `'standard'` (default): a signed JSON body; `'slack'`: a Slack-compatible message. */
  format?: 'standard' | 'slack';
  /** The console's public URL, linked from Slack messages instead of the approve command. */
  publicUrl?: string;
  /**
   * Slack messages without `publicUrl`: the arguments their approve command carries after the
   * job, step and digest, the ones the decision needs to run the step (for example `['--module',
   * './ledger.mjs', '--store', 'sqlite:./jobs.db']`); `warrant` sets the flags it ran with. At
   * most 64 strings of at most 1,000 characters each.
   */
  approveFlags?: readonly string[];
}

/** How notifications are delivered (every field optional; docs/api.md, "Notifications"). */
export interface NotificationDelivery {
  /** Attempts before a notification is marked failed. Default 15 (the last about 23 h after the first). */
  attempts?: number;
  /** Delay before the first retry; each next one doubles it. Default 5000. */
  initialDelayMs?: number;
  /** Largest delay between two attempts. Default 86400000 (24 h). */
  maxDelayMs?: number;
  /** Time-out of one request. Default 10000. */
  timeoutMs?: number;
  /** How often the outbox is read for rows written by other processes or due again. Default 1000. */
  pollMs?: number;
  /** Pending notifications kept per destination; beyond it the oldest is dropped. Default 10000. */
  maxPending?: number;
}

/** A destination as checked: the HMAC key decoded, the events as a set. */
export interface CheckedDestination {
  readonly url: string;
  /** The decoded bytes of the secret; undefined for an unsigned Slack destination. */
  readonly key: Buffer | undefined;
  readonly events: ReadonlySet<string>;
  readonly format: 'standard' | 'slack';
  readonly publicUrl: string | undefined;
  readonly approveFlags: readonly string[];
  /** Internal addresses may be posted to (docs/api.md, "Notifications"). */
  readonly allowPrivate: boolean;
  /** How the store names it: the URL's origin and a digest of the whole URL (never the URL). */
  readonly label: string;
}

export interface NotificationsConfig {
  readonly destinations: readonly CheckedDestination[];
  readonly delivery: Readonly<Required<NotificationDelivery>>;
}

const DEFAULT_DELIVERY: Readonly<Required<NotificationDelivery>> = Object.freeze({
  attempts: 15,
  initialDelayMs: 5_000,
  maxDelayMs: 86_400_000,
  timeoutMs: 10_000,
  pollMs: 1_000,
  maxPending: 10_000,
});

function invalid(message: string): TypeError {
  return createError(TypeError, ErrorCode.RUNTIME_OPTIONS_INVALID, message);
}

const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/** The HMAC key of a `whsec_<base64>` secret: its decoded bytes, 24 to 64 of them. */
export function secretKey(secret: unknown, name: string): Buffer {
  const match = typeof secret === 'string' ? SECRET.exec(secret) : null;
  const encoded = match?.[1];
  const key = encoded === undefined ? undefined : Buffer.from(encoded, 'base64');
  if (key === undefined || key.toString('base64') !== encoded || key.length < 24 || key.length > 64)
    throw invalid(
      `${name} must be a Standard Webhooks secret: whsec_ then the base64 of 24 to 64 random bytes`,
    );
  return key;
}

function httpUrl(value: unknown, name: string): URL {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw invalid(`${name} must be an http: or https: URL`);
  return url;
}

/** The label the store keeps for a URL: its origin and a digest of all of it. */
export function destinationLabel(url: string): string {
  const digest = createHash('sha256').update(url).digest('hex').slice(0, 16);
  return `${new URL(url).origin}#${digest}`;
}

function checkDestination(value: unknown, name: string): CheckedDestination {
  if (typeof value !== 'object' || value === null)
    throw invalid(
      `${name} must be an object { url, secret, events?, format? }, got ${describeValue(value)}`,
    );
  const field = (key: string): unknown =>
    readField(value, key, (problem) => invalid(`${name}.${key} ${problem}`));
  const url = httpUrl(field('url'), `${name}.url`).href;
  const format = field('format') ?? 'standard';
  if (format !== 'standard' && format !== 'slack')
    throw invalid(`${name}.format must be 'standard' or 'slack', got ${describeValue(format)}`);
  const secret = field('secret');
  const key =
    secret === undefined && format === 'slack' ? undefined : secretKey(secret, `${name}.secret`);
  const events = field('events');
  let checkedEvents: Set<string> = new Set(NOTIFICATION_EVENTS);
  if (events !== undefined) {
    if (!Array.isArray(events) || events.length === 0)
      throw invalid(`${name}.events must be a non-empty array of event types`);
    checkedEvents = new Set();
    for (const event of events as unknown[]) {
      if (!NOTIFICATION_EVENTS.includes(event as NotificationEvent))
        throw invalid(
          `${name}.events: ${describeValue(event)} is not one of ${NOTIFICATION_EVENTS.join(', ')}`,
        );
      checkedEvents.add(event as string);
    }
  }
  const allowPrivate = field('allowPrivate');
  if (allowPrivate !== undefined && typeof allowPrivate !== 'boolean')
    throw invalid(`${name}.allowPrivate must be a boolean, got ${describeValue(allowPrivate)}`);
  const publicUrl = field('publicUrl');
  const checkedPublicUrl =
    publicUrl === undefined ? undefined : httpUrl(publicUrl, `${name}.publicUrl`).href;
  const approveFlags = field('approveFlags');
  if (
    approveFlags !== undefined &&
    (!Array.isArray(approveFlags) ||
      approveFlags.length > 64 ||
      !(approveFlags as unknown[]).every(
        (word) => typeof word === 'string' && word.length > 0 && word.length <= 1_000,
      ))
  )
    throw invalid(
      `${name}.approveFlags must be an array of at most 64 non-empty strings of at most 1,000 characters`,
    );
  return Object.freeze({
    url,
    key,
    events: checkedEvents,
    format,
    publicUrl: checkedPublicUrl,
    approveFlags: Object.freeze([...((approveFlags as string[] | undefined) ?? [])]),
    allowPrivate: allowPrivate === true,
    label: destinationLabel(url),
  });
}

function checkDelivery(value: unknown): Readonly<Required<NotificationDelivery>> {
  if (value === undefined) return DEFAULT_DELIVERY;
  if (typeof value !== 'object' || value === null)
    throw invalid(`options.notificationDelivery must be an object, got ${describeValue(value)}`);
  const checked: Record<string, number> = { ...DEFAULT_DELIVERY };
  for (const key of Object.keys(DEFAULT_DELIVERY)) {
    const given = readField(value, key, (problem) =>
      invalid(`options.notificationDelivery.${key} ${problem}`),
    );
    if (given === undefined) continue;
    if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 1)
      throw invalid(
        `options.notificationDelivery.${key} must be a positive integer, got ${describeValue(given)}`,
      );
    checked[key] = given;
  }
  return Object.freeze(checked) as unknown as Readonly<Required<NotificationDelivery>>;
}

/**
 * `notifications` (an array of destinations, or undefined for none) and `notificationDelivery`;
 * undefined when there is no destination (nothing is written, nothing delivered).
 */
export function checkNotificationsOption(
  notifications: unknown,
  delivery: unknown,
): NotificationsConfig | undefined {
  const checkedDelivery = checkDelivery(delivery);
  if (notifications === undefined) return undefined;
  if (!Array.isArray(notifications))
    throw invalid(
      `options.notifications must be an array of { url, secret, events?, format? }, got ${describeValue(notifications)}`,
    );
  const destinations = (notifications as unknown[]).map((value, index) =>
    checkDestination(value, `options.notifications[${index}]`),
  );
  const labels = new Set(destinations.map((destination) => destination.label));
  if (labels.size !== destinations.length)
    throw invalid('options.notifications lists the same url twice');
  if (destinations.length === 0) return undefined;
  return Object.freeze({ destinations: Object.freeze(destinations), delivery: checkedDelivery });
}
