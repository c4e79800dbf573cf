// POST /api/plans/preview (docs/api.md, "runtime.previewPlan"), over a socket.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHttpServer } from '../../src/http/server.js';
import { OperatorRuntime, cedarAuthorizer } from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

describe('POST /api/plans/preview', () => {
  it('answers 200 with each step decided as the request caller, runs nothing; the status of POST /api/plans for a refused plan; 401 without the token', async () => {
    let ran = 0;
    const runtime = new OperatorRuntime({
      authorizer: cedarAuthorizer({
        policies:
          '@id("mine") permit(principal == Warrant::Caller::"token", action, resource);\n' +
          '@id("loud") forbid(principal, action, resource) when { context.input.loud == true };',
      }),
    });
    const [name] = register(runtime, { execute: () => ++ran });
    const capability = name as string;
    const app = createHttpServer(runtime, { token: 'secret' });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const post = (body: unknown, token = 'secret') =>
      fetch(`${url}/api/plans/preview`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    try {
      const answer = await post({
        version: '1.0',
        steps: [
          { id: 'a', capability, input: { loud: false } },
          { id: 'b', capability, input: { loud: true } },
          { id: 'c', capability, input: { from: { $ref: 'steps.a.result' } } },
        ],
      });
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), {
        steps: [
          { id: 'a', capability, outcome: 'allow', policies: ['mine'] },
          {
            id: 'b',
            capability,
            outcome: 'deny',
            reason: 'Forbidden by policy loud',
            policies: ['loud'],
          },
          { id: 'c', capability, outcome: 'unknown', waitsFor: ['a'] },
        ],
      });
      assert.equal(ran, 0);
      assert.deepEqual(await runtime.listJobs(), []);
      const refused = await post({ version: '1.0', steps: [{ id: 'a', capability: 'no.such' }] });
      assert.equal(refused.status, 404); // as POST /api/plans answers an unknown capability
      assert.equal(
        ((await refused.json()) as { issues: { code: string }[] }).issues[0]?.code,
        'UNKNOWN_CAPABILITY',
      );
      assert.equal((await post({ version: '1.0', steps: [] }, 'wrong')).status, 401);
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});
