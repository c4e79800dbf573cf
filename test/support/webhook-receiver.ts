// A local Standard Webhooks receiver for the notification tests: it verifies every delivery with
// the `standardwebhooks` library (not our signing code), records it, and answers as told. It can
// go down (its port closed) and come up again on the same port. Every wait is bounded.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { after } from 'node:test';
import { Webhook } from 'standardwebhooks';

export interface Delivery {
  readonly id: string;
  readonly timestamp: string;
  readonly body: string;
  /** The body parsed; set when the signature verified (or when no secret is checked). */
  readonly payload: Record<string, unknown>;
  readonly verified: boolean;
}

export interface Receiver {
  readonly url: string;
  /** Every request received, in order of arrival. */
  readonly deliveries: Delivery[];
  /** The status answered (default 204). */
  status: number;
  /** When true, requests are held and never answered. */
  hang: boolean;
  down(): Promise<void>;
  up(): Promise<void>;
  /** Resolves once `ready()` is true, checked on each delivery; rejects after `ms`. */
  until(ready: () => boolean, ms?: number): Promise<void>;
}

const receivers: Server[] = [];
after(async () => {
  for (const server of receivers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

export async function startReceiver(secret: string | undefined): Promise<Receiver> {
  const verifier = secret === undefined ? undefined : new Webhook(secret);
  const deliveries: Delivery[] = [];
  const waiters = new Set<() => void>();
  const held: ServerResponse[] = [];
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const headers = {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      };
      let payload: Record<string, unknown> = {};
      let verified: boolean;
      try {
        payload = (verifier?.verify(body, headers) ?? JSON.parse(body)) as Record<string, unknown>;
        verified = verifier !== undefined;
      } catch {
        verified = false;
      }
      deliveries.push({
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        body,
        payload,
        verified,
      });
      for (const waiter of waiters) waiter();
      if (receiver.hang) held.push(response);
      else response.writeHead(receiver.status).end();
    });
  };
  let server = createServer(handle);
  receivers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    status: 204,
    hang: false,
    async down() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
    async up() {
      server = createServer(handle);
      receivers.push(server);
      await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
    },
    until(ready, ms = 20_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!ready()) return;
          waiters.delete(check);
          clearTimeout(timer);
          clearInterval(poll);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          clearInterval(poll);
          reject(
            new Error(`receiver: not ready within ${ms} ms (${deliveries.length} deliveries)`),
          );
        }, ms);
        // Conditions on the store (a row marked failed) change without a delivery.
        const poll = setInterval(check, 20);
        waiters.add(check);
        check();
      });
    },
  };
  return receiver;
}

/** A receiver that accepts connections and never answers (nor closes them) until stopped. */
export interface SilentReceiver {
  readonly url: string;
  /** Connections accepted and still open. */
  open(): number;
  /** Closes the port and every connection it holds. */
  stop(): Promise<void>;
}

const silentStops: (() => Promise<void>)[] = [];
after(async () => {
  for (const stop of silentStops) await stop();
});

/** A real socket on 127.0.0.1 that takes every request and answers none. */
export async function startSilentReceiver(): Promise<SilentReceiver> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    // Read what comes (so the sender is never held by a full buffer), answer nothing.
    socket.resume();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= new Promise<void>((done) => {
      server.close(() => done());
      for (const socket of sockets) socket.destroy();
    }));
  silentStops.push(stop);
  return { url: `http://127.0.0.1:${port}/hook`, open: () => sockets.size, stop };
}

/** A fresh Standard Webhooks secret (24 random bytes). */
export function newSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64')}`;
}
