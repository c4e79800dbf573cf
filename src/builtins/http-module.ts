/**
 * `http.get` (read) and `http.status`: GET requests to allow-listed hosts only, with a timeout
 * and a cap on the body returned. An empty allow-list refuses every request.
 */
import { createCapability, type CapabilityModule } from '../index.js';

export interface HttpModuleOptions {
  /** Host names (or host:port) that may be requested. */
  readonly allowHosts: readonly string[];
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
}

export function createHttpModule(options: HttpModuleOptions): CapabilityModule {
  const allowed = new Set(options.allowHosts.map((host) => host.toLowerCase()));
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return {
    manifest: { name: 'builtin-http', version: '1.0.0', capabilities: ['http.get', 'http.status'] },
    capabilities: [
      createCapability<
        { url: string },
        { url: string; status: number; contentType: string | null; body: string }
      >({
        name: 'http.get',
        version: '1.0.0',
        description: 'GETs a URL on an allow-listed host and returns its status and text body',
        risk: 'read',
        timeoutMs: timeoutMs + 1_000,
        inputSchema: { url: { type: 'string', required: true, description: 'http(s) URL' } },
        execute: async ({ input, context }) => {
          let url: URL;
          try {
            url = new URL(input.url);
          } catch {
            throw new Error(`Not a valid URL: ${JSON.stringify(input.url)}`);
          }
          if (url.protocol !== 'http:' && url.protocol !== 'https:')
            throw new Error(`Only http and https URLs are allowed`);
          if (!allowed.has(url.hostname.toLowerCase()) && !allowed.has(url.host.toLowerCase())) {
            throw new Error(`Host ${JSON.stringify(url.host)} is not in the allow-list`);
          }
          const response = await fetch(url, {
            redirect: 'manual',
            signal: AbortSignal.any([context.signal, AbortSignal.timeout(timeoutMs)]),
          });
          const text = await response.text();
          return {
            url: url.href,
            status: response.status,
            contentType: response.headers.get('content-type'),
            body: text.length > maxBytes ? text.slice(0, maxBytes) : text,
          };
        },
      }),
      createCapability<unknown, { provider: string; ready: boolean; allowHosts: string[] }>({
        name: 'http.status',
        version: '1.0.0',
        description: 'Reports the http provider configuration',
        risk: 'read',
        execute: () => ({ provider: 'http', ready: allowed.size > 0, allowHosts: [...allowed] }),
      }),
    ],
  };
}
