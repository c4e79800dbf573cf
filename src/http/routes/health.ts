/** `GET /health`: the one route open without credentials (docs/guide/http.md, "HTTP routes"). */
import type { FastifyInstance } from 'fastify';

export function registerHealthRoute(app: FastifyInstance): void {
  app.get('/health', async () => ({ status: 'ok' }));
}
