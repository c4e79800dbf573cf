/**
 * The stdio transport of `warrant mcp`: newline-delimited JSON-RPC on stdin and stdout, as in the
 * MCP stdio binding, where no bad line goes unanswered or ends the connection. A line that is not
 * JSON is answered `-32700 Parse error`; JSON that is not a JSON-RPC message, and a line longer
 * than the limit (skipped to its end, never buffered), are answered `-32600 Invalid Request`
 * (with the message's id when it has a usable one, else `null`); the next line is served as
 * usual. The SDK's own StdioServerTransport drops the first two silently (the client waits for
 * its time-out) and closes the connection on the third.
 */
import type { Readable, Writable } from 'node:stream';
import { parseJson } from '../json/parse-json.js';
import {
  parseJSONRPCMessage,
  serializeMessage,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/server';

/** Longest line read, in bytes: the SDK's stdio read limit (STDIO_DEFAULT_MAX_BUFFER_SIZE). */
export const DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024;

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const NEWLINE = 0x0a;

export interface StdioTransportOptions {
  /** Longest line accepted, in bytes (without its newline). Default 10 MiB. */
  readonly maxLineBytes?: number;
}

/** The id to answer a message that is not valid JSON-RPC with: its own when usable, else null. */
function idOf(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const descriptor = Object.getOwnPropertyDescriptor(value, 'id');
  const id: unknown = descriptor?.value;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Settles once the transport is closed, whoever closed it (stdin ended, stdout broke, close()). */
  readonly closed: Promise<void>;
  readonly #input: Readable;
  readonly #output: Writable;
  readonly #maxLineBytes: number;
  readonly #markClosed: () => void;
  /** The bytes of the line being read, not yet ended by a newline. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** The line being read is over the limit: its bytes are dropped up to the next newline. */
  #skipping = false;
  #started = false;
  #isClosed = false;

  constructor(
    input: Readable = process.stdin,
    output: Writable = process.stdout,
    options: StdioTransportOptions = {},
  ) {
    this.#input = input;
    this.#output = output;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    let markClosed = (): void => {};
    this.closed = new Promise<void>((resolve) => (markClosed = resolve));
    this.#markClosed = markClosed;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('StdioLineTransport already started');
    this.#started = true;
    this.#input.on('data', this.#onData);
    this.#input.on('error', this.#onInputError);
    this.#input.on('end', this.#onInputEnd);
    this.#input.on('close', this.#onInputEnd);
    this.#output.on('error', this.#onOutputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#isClosed) return Promise.reject(new Error('StdioLineTransport is closed'));
    return this.#write(serializeMessage(message));
  }

  async close(): Promise<void> {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#input.off('data', this.#onData);
    this.#input.off('error', this.#onInputError);
    this.#input.off('end', this.#onInputEnd);
    this.#input.off('close', this.#onInputEnd);
    this.#output.off('error', this.#onOutputError);
    if (this.#input.listenerCount('data') === 0) this.#input.pause();
    this.#pending = [];
    this.#pendingBytes = 0;
    this.onclose?.();
    this.#markClosed();
  }

  readonly #onData = (chunk: Buffer | string): void => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let from = 0;
    while (from <= data.length && !this.#isClosed) {
      const newline = data.indexOf(NEWLINE, from);
      const end = newline === -1 ? data.length : newline;
      if (!this.#skipping && end > from) {
        if (this.#pendingBytes + (end - from) > this.#maxLineBytes) {
          this.#skipping = true;
          this.#pending = [];
          this.#pendingBytes = 0;
        } else {
          this.#pending.push(data.subarray(from, end));
          this.#pendingBytes += end - from;
        }
      }
      if (newline === -1) return;
      from = newline + 1;
      if (this.#skipping) {
        this.#skipping = false;
        this.#refuse(
          null,
          INVALID_REQUEST,
          `Invalid Request: message over ${this.#maxLineBytes} bytes`,
        );
      } else {
        const line = Buffer.concat(this.#pending, this.#pendingBytes);
        this.#pending = [];
        this.#pendingBytes = 0;
        this.#receive(line);
      }
    }
  };

  #receive(line: Buffer): void {
    // Invalid UTF-8 decodes to U+FFFD, as everywhere in Node; a newline byte never sits inside
    // a multi-byte sequence, so splitting on it first is safe.
    const text = line.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = parseJson(text);
    } catch {
      this.#refuse(null, PARSE_ERROR, 'Parse error');
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(value);
    } catch {
      this.#refuse(idOf(value), INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message');
      return;
    }
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Answers a line that could not be delivered, and reports it (one line, for the log). */
  #refuse(id: string | number | null, code: number, message: string): void {
    this.onerror?.(new Error(`${message} (answered ${code})`));
    const answer = `${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`;
    this.#write(answer).catch((error: unknown) =>
      this.onerror?.(error instanceof Error ? error : new Error(String(error))),
    );
  }

  #write(text: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#output.write(text, (error) => (error ? reject(error) : resolve()));
    });
  }

  readonly #onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onInputEnd = (): void => {
    void this.close();
  };

  readonly #onOutputError = (error: Error): void => {
    if (this.#isClosed) return;
    this.onerror?.(error);
    void this.close();
  };
}
