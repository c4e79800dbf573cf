// --jwks <https URL>: the key set is served over TLS from 127.0.0.1 with a certificate made
// here by openssl; the child process trusts it through NODE_EXTRA_CA_CERTS (Node's fetch takes
// no CA option). Nothing leaves the machine.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { exportJWK, generateKeyPair } from 'jose';
import type { AuthResult } from '../../../src/http/auth/index.js';
import { CHALLENGE_INVALID_TOKEN } from '../../../src/http/auth/index.js';
import { selfSignedCertificate, signToken, tempDir } from './fixtures/helpers.js';
import { TS_LOADER } from '../../support/ts-loader.js';

const CLIENT = fileURLToPath(new URL('./fixtures/jwks-client.ts', import.meta.url));
const dir = tempDir();
let server: Server;
let base: string;
let certFile: string;
const hits: Record<string, number> = {};
let jwks = '';

function runClient(scenarios: unknown[], trustCertificate: boolean): Promise<AuthResult[][]> {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  if (trustCertificate) env.NODE_EXTRA_CA_CERTS = certFile;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...TS_LOADER, CLIENT, JSON.stringify(scenarios)],
      { env, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`client failed: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as AuthResult[][]);
      },
    );
  });
}

before(async () => {
  const tls = selfSignedCertificate(dir.path);
  certFile = tls.certFile;
  server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const path = req.url ?? '';
    hits[path] = (hits[path] ?? 0) + 1;
    if (path === '/jwks.json') res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
    else if (path === '/slow')
      return; // never answers: the client's time-out must end the wait
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  base = `https://127.0.0.1:${address.port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  dir.remove();
});

describe('--jwks <https URL>', () => {
  it('fetches the key set once (cached), accepts its tokens, refuses an unknown kid; time-outs and errors log one line', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1' }] });
    const good = await signToken({ alg: 'ES256', key: privateKey, kid: 'k1' });
    const bob = await signToken({
      alg: 'ES256',
      key: privateKey,
      kid: 'k1',
      claims: { sub: 'bob' },
    });
    const unknownKid = await signToken({ alg: 'ES256', key: privateKey, kid: 'k2' });
    const [cached, slow, missing] = await runClient(
      [
        { url: `${base}/jwks.json`, tokens: [good, bob, unknownKid, good] },
        { url: `${base}/slow`, timeoutMs: 300, tokens: [good] },
        { url: `${base}/missing.json`, tokens: [good] },
      ],
      true,
    );
    assert.deepEqual(
      cached?.map((result) => (result.ok ? result.caller.id : result)),
      ['alice', 'bob', { ok: false, challenge: CHALLENGE_INVALID_TOKEN }, 'alice'],
    );
    // One fetch for four tokens: the unknown kid does not refetch within the 30 s cool-down.
    assert.equal(hits['/jwks.json'], 1);
    assert.equal(slow?.[0]?.ok, false);
    assert.match(
      (slow?.[0] as { log?: string }).log ?? '',
      /^JWT keys from --jwks https:\/\/127\.0\.0\.1:\d+\/slow: timed out$/,
    );
    assert.equal(hits['/slow'], 1);
    assert.match((missing?.[0] as { log?: string }).log ?? '', /Expected 200 OK/);
  });

  it('does not trust a certificate the system does not: refused, with one log line', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1' }] });
    const [[result] = []] = await runClient(
      [
        {
          url: `${base}/jwks.json`,
          tokens: [await signToken({ alg: 'ES256', key: privateKey, kid: 'k1' })],
        },
      ],
      false,
    );
    assert.equal(result?.ok, false);
    assert.match(
      (result as { log?: string }).log ?? '',
      /failed \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/,
    );
  });
});
