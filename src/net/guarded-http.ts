/**
 * Outbound HTTP that does exactly what was authorized (docs/api.md, "Prepared effects"): the URL
 * is normalized and its host resolved once, before the decision; the addresses are checked
 * against the address rule (address-ranges.ts) and the request then connects only to them, with
 * a lookup that answers those addresses and nothing else (no second resolution, so no DNS
 * rebinding between the decision and the call), on a connection of its own, following no
 * redirect. Used by `createHttpCapability` (and so `http.get`) and by webhook deliveries.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, isIPv6, type LookupFunction } from 'node:net';
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { digestJson } from '../json/canonical-json.js';
import { internalRange } from './address-ranges.js';

/** An address a host name resolved to. */
export interface ResolvedAddress {
  readonly address: string;
  /** 4 or 6. */
  readonly family: number;
}

/**
 * Resolves a host name to every address it has (the default is `dns.lookup` with `all: true`);
 * a test or a module may give its own.
 */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** Where an outbound request may go. */
export interface AddressRule {
  /** Loopback, private, link-local, unique-local and metadata addresses too. Default false. */
  readonly allowPrivate?: boolean;
  readonly resolve?: HostResolver;
}

const defaultResolver: HostResolver = (hostname) =>
  dnsLookup(hostname, { all: true, verbatim: true });

/** A URL as it will be requested: http or https, no credentials, no fragment. */
export function normalizeUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`Not a valid URL: ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error('Only http and https URLs are allowed');
  if (url.username !== '' || url.password !== '')
    throw new Error('A URL with credentials is not sent (they would be recorded)');
  url.hash = '';
  return url;
}

/** The host of a URL as an address or name to resolve: an IPv6 literal without its brackets. */
function hostOf(url: URL): string {
  const { hostname } = url;
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

/**
 * Every address `url`'s host resolves to, sorted (one answer, one text, whatever order the
 * resolver gave): an IP literal is its own address, with no lookup.
 */
export async function resolveHost(url: URL, rule: AddressRule = {}): Promise<string[]> {
  const host = hostOf(url);
  if (isIP(host) !== 0) return [host];
  const answers = await (rule.resolve ?? defaultResolver)(host);
  const addresses = [...new Set(Array.from(answers, (answer) => String(answer.address)))];
  if (addresses.length === 0) throw new Error(`${host} resolved to no address`);
  for (const address of addresses)
    if (isIP(address) === 0)
      throw new Error(`${host} resolved to ${JSON.stringify(address)}, not an IP address`);
  return addresses.sort();
}

/**
 * The first of `addresses` in an internal range, as a refusal (EFFECT_REFUSED) carrying
 * `effect` (what was about to be done, to be recorded as decided); undefined when all are public
 * or the rule allows private ones.
 */
export function refusal(
  url: URL,
  addresses: readonly string[],
  rule: AddressRule,
  effect: unknown,
  /** What allows them, named in the message. */
  allowedBy = 'allowPrivate, --http-allow-private',
): Error | undefined {
  if (rule.allowPrivate === true) return undefined;
  for (const address of addresses) {
    const range = internalRange(address);
    if (range === undefined) continue;
    const host = hostOf(url);
    const where = host === address ? address : `${host} resolved to ${address}, which`;
    const error = createError(
      Error,
      ErrorCode.EFFECT_REFUSED,
      `${where} is a ${range} address; internal addresses are refused unless allowed (${allowedBy})`,
    );
    Object.defineProperty(error, 'effect', { value: effect, enumerable: false });
    return error;
  }
  return undefined;
}

/** A lookup that answers `addresses` only: the connection goes nowhere else. */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const all: LookupAddress[] = addresses.map((address) => ({
    address,
    family: isIPv6(address) ? 6 : 4,
  }));
  return ((
    _hostname: string,
    options: { family?: number | string; all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const usable = family === 4 || family === 6 ? all.filter((a) => a.family === family) : all;
    const first = usable[0];
    if (first === undefined) {
      callback(
        Object.assign(new Error('no prepared address of that family'), { code: 'ENOTFOUND' }),
        '',
      );
      return;
    }
    if (options.all === true) callback(null, usable);
    else callback(null, first.address, first.family);
  }) as unknown as LookupFunction;
}

/** One request as sent: its method, headers (lower-case names) and body. */
export interface SentRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Sends one request to `url`, connecting only to `addresses` (a connection of its own, closed
 * after), and resolves with the response once its head arrives; a redirect is a response like
 * any other. Rejects on a connection failure or an abort of `signal`.
 */
export function sendPinned(
  url: URL,
  addresses: readonly string[],
  sent: SentRequest,
): Promise<IncomingMessage> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers =
    sent.body === undefined || 'content-length' in sent.headers
      ? sent.headers
      : { ...sent.headers, 'content-length': String(Buffer.byteLength(sent.body)) };
  return new Promise<IncomingMessage>((resolve, reject) => {
    const request = send(url, {
      method: sent.method,
      headers,
      lookup: pinnedLookup(addresses),
      agent: false,
      ...(sent.signal !== undefined && { signal: sent.signal }),
    });
    request.once('response', resolve);
    // Every error, the ones after the response too (an abort once the body is read): settled once.
    request.on('error', reject);
    request.end(sent.body);
  });
}

/** Header names in lower case (HTTP names are case-insensitive): one object, one digest. */
export function normalizeHeaders(
  headers: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const normalized: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value !== 'string') throw new Error(`Header ${name} must be a string`);
    normalized[name.toLowerCase()] = value;
  }
  return normalized;
}

/** The effect of one HTTP request (docs/api.md, "Prepared effects"). */
export interface HttpEffect {
  readonly method: string;
  readonly url: string;
  readonly addresses: readonly string[];
  /** `sha256:` of the RFC 8785 JSON of the request headers (names in lower case). */
  readonly headersDigest: string;
  /** `sha256:` of the RFC 8785 JSON of the body text, when there is one. */
  readonly bodyDigest?: string;
}

/** What a request is, before it is prepared. */
export interface HttpRequestSpec {
  readonly url: string;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** The effect of `spec` without its addresses: what the prepared one is compared with. */
function effectOf(spec: HttpRequestSpec, addresses: readonly string[]): HttpEffect {
  const method = (spec.method ?? 'GET').toUpperCase();
  const effect: { -readonly [K in keyof HttpEffect]: HttpEffect[K] } = {
    method,
    url: normalizeUrl(spec.url).href,
    addresses,
    headersDigest: digestJson(normalizeHeaders(spec.headers)),
  };
  if (spec.body !== undefined) effect.bodyDigest = digestJson(spec.body);
  return effect;
}

/**
 * Prepares a request: normalizes its URL, resolves its host and checks every address. Throws
 * EFFECT_REFUSED (carrying the effect) for an internal address the rule does not allow.
 */
export async function prepareHttp(spec: HttpRequestSpec, rule: AddressRule): Promise<HttpEffect> {
  const url = normalizeUrl(spec.url);
  const addresses = await resolveHost(url, rule);
  const effect = effectOf(spec, addresses);
  const refused = refusal(url, addresses, rule, effect);
  if (refused !== undefined) throw refused;
  return effect;
}

/**
 * Throws unless `spec` is the request `effect` was prepared for (the same method, URL, headers
 * and body) and the effect's addresses pass the rule: then the request may be sent to them.
 */
export function checkPrepared(
  spec: HttpRequestSpec,
  effect: unknown,
  rule: AddressRule,
): HttpEffect {
  const prepared = effect as Partial<HttpEffect> | null;
  const addresses = prepared?.addresses;
  if (
    !Array.isArray(addresses) ||
    addresses.length === 0 ||
    !addresses.every((address) => typeof address === 'string' && isIP(address) !== 0)
  )
    throw new Error('The prepared effect has no addresses');
  const expected = effectOf(spec, addresses as string[]);
  if (
    prepared?.method !== expected.method ||
    prepared.url !== expected.url ||
    prepared.headersDigest !== expected.headersDigest ||
    prepared.bodyDigest !== expected.bodyDigest
  )
    throw new Error('The request is not the one prepared');
  const refused = refusal(new URL(expected.url), expected.addresses, rule, expected);
  if (refused !== undefined) throw refused;
  return expected;
}
