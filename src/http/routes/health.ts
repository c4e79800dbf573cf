/** `GET /health`: the one route open without credentials (README "HTTP routes"). */
import type { FastifyInstance } from 'fastify';

export function registerHealthRoute(app: FastifyInstance): void {
  app.get('/health', async () => ({ status: 'ok' }));
}
