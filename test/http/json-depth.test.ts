// JSON nesting is bounded before parsing (issue 14 item 3): one scan of the text refuses bodies
// nested deeper than 1,000 levels, so a 1 MiB body of 500,000 open brackets is refused without
// being parsed, walked or admitted.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { MAX_JSON_DEPTH, exceedsJsonDepth } from '../../src/http/json-depth.js';
import { createHttpServer } from '../../src/http/server.js';
import { OperatorRuntime, createCapability } from '../../src/index.js';

const arrays = (depth: number, leaf = '1') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
const objects = (depth: number, leaf = '1') =>
  `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;

describe('exceedsJsonDepth(text, maxDepth)', () => {
  it('counts open arrays and objects, the outermost as level 1', () => {
    assert.equal(MAX_JSON_DEPTH, 1000);
    for (const nest of [arrays, objects]) {
      assert.equal(exceedsJsonDepth(nest(1000)), false);
      assert.equal(exceedsJsonDepth(nest(1001)), true);
      assert.equal(exceedsJsonDepth(nest(3), 3), false);
      assert.equal(exceedsJsonDepth(nest(4), 3), true);
    }
    assert.equal(exceedsJsonDepth('1'), false);
    assert.equal(exceedsJsonDepth('"text"', 0), false);
    assert.equal(exceedsJsonDepth('[]', 0), true);
    assert.equal(exceedsJsonDepth('[[],[],{"a":1},[]]', 2), false, 'siblings do not add up');
    assert.equal(exceedsJsonDepth('[[],[],{"a":[]}]', 2), true);
  });

  it('ignores brackets inside strings, escaped quotes and escaped backslashes included', () => {
    assert.equal(exceedsJsonDepth('["[[[[{{{{"]', 1), false);
    assert.equal(exceedsJsonDepth('["\\"[[[["]', 1), false, 'an escaped quote stays inside');
    assert.equal(exceedsJsonDepth('["\\\\",[[]]]', 2), true, 'an escaped backslash ends it');
    assert.equal(exceedsJsonDepth('{"[[[":"]]]","k":[1]}', 2), false);
    assert.equal(exceedsJsonDepth('["\\u005b[[["]', 1), false);
  });

  it('scans malformed text without throwing (the parser refuses it afterwards)', () => {
    assert.equal(exceedsJsonDepth(']]]]][[', 2), false);
    assert.equal(exceedsJsonDepth('"unterminated [[[[', 1), false);
    assert.equal(exceedsJsonDepth(`${'['.repeat(5)}`, 4), true);
  });
});

describe('HTTP bodies nested deeper than 1,000 levels', () => {
  let invoked = 0;
  new OperatorRuntime().use({
    manifest: { name: 'depth-test', version: '1.0.0', capabilities: ['depth.echo'] },
    capabilities: [
      createCapability({
        name: 'depth.echo',
        version: '1.0.0',
        description: 'counts its calls',
        risk: 'read',
        execute: () => (invoked += 1),
      }),
    ],
  });
  const runtime = new OperatorRuntime();
  let app: FastifyInstance;
  let url = '';
  after(async () => {
    await app.close();
    await runtime.close();
  });

  const post = async (path: string, body: string) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    return { status: response.status, text: await response.text() };
  };

  it('refuses a 1 MiB body of 500,000 levels with 400, records no job and keeps serving', async () => {
    app = createHttpServer(runtime);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    const refused = { error: 'JSON body is nested deeper than 1000 levels' };
    for (const body of [
      `{"input":{"nest":${arrays(500_000)}}}`,
      `{"input":{"nest":${objects(170_000)}}}`,
      arrays(500_000),
      // Unbalanced: the scan refuses it as soon as it passes the limit.
      `{"input":${'['.repeat(1_000_000)}`,
    ]) {
      assert.ok(body.length <= 1024 * 1024, 'under the body limit');
      for (const path of ['/api/capabilities/depth.echo/execute', '/api/plans']) {
        const answer = await post(path, body);
        assert.equal(answer.status, 400, answer.text.slice(0, 200));
        assert.deepEqual(JSON.parse(answer.text), refused);
      }
    }
    assert.equal(invoked, 0);
    assert.deepEqual(await runtime.listJobs(), []);
  });

  it('refuses 1,001 levels and serves 1,000 (the body itself counts as level 1)', async () => {
    const deepest = await post(
      '/api/capabilities/depth.echo/execute',
      `{"input":{"nest":${arrays(998)}}}`,
    );
    assert.equal(deepest.status, 200, deepest.text.slice(0, 200));
    const over = await post(
      '/api/capabilities/depth.echo/execute',
      `{"input":{"nest":${arrays(999)}}}`,
    );
    assert.equal(over.status, 400);
    const plan = await post(
      '/api/plans',
      `{"version":"1.0","steps":[{"id":"s","capability":"depth.echo","input":${objects(997)}}]}`,
    );
    assert.equal(plan.status, 201, plan.text.slice(0, 200));
  });
});
