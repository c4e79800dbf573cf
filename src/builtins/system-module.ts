/** `system.echo` (read) and `system.status`: harmless capabilities for trying Warrant out. */
import { createCapability, type CapabilityModule } from '../index.js';

export function createSystemModule(): CapabilityModule {
  return {
    manifest: {
      name: 'builtin-system',
      version: '1.0.0',
      capabilities: ['system.echo', 'system.status'],
    },
    capabilities: [
      createCapability<{ message: string }, { message: string; at: string }>({
        name: 'system.echo',
        version: '1.0.0',
        description: 'Returns its message, with the time it was echoed',
        risk: 'read',
        inputSchema: { message: { type: 'string', required: true, description: 'Text to echo' } },
        outputSchema: {
          type: 'object',
          properties: { message: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
          required: ['message', 'at'],
        },
        execute: ({ input }) => ({ message: input.message, at: new Date().toISOString() }),
      }),
      createCapability<
        unknown,
        { provider: string; ready: boolean; node: string; uptimeSeconds: number }
      >({
        name: 'system.status',
        version: '1.0.0',
        description: 'Reports the process running Warrant',
        risk: 'read',
        outputSchema: {
          type: 'object',
          properties: {
            provider: { type: 'string' },
            ready: { type: 'boolean' },
            node: { type: 'string' },
            uptimeSeconds: { type: 'number' },
          },
          required: ['provider', 'ready', 'node', 'uptimeSeconds'],
        },
        execute: () => ({
          provider: 'system',
          ready: true,
          node: process.version,
          uptimeSeconds: Math.round(process.uptime()),
        }),
      }),
    ],
  };
}
