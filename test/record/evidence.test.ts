// Evidence bundles (docs/api.md, "runtime.exportJob"): exported from a real SQLite store, checked
// offline by verifyEvidence with no store; every part changed is reported by name.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  OperatorRuntime,
  verifyEvidence,
  type EvidenceBundle,
  type EvidenceVerification,
} from '../../src/index.js';
import { register } from '../support/runtime-fixtures.js';

const keys = () => {
  const pair = generateKeyPairSync('ed25519');
  return {
    privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
};
const signer = keys();
const stranger = keys();

const copy = (bundle: EvidenceBundle): Record<string, unknown> =>
  JSON.parse(JSON.stringify(bundle)) as Record<string, unknown>;

/** The parts named by the problems found. */
const parts = (verification: EvidenceVerification) =>
  [...new Set(verification.problems.map((problem) => problem.part))].sort();

describe('evidence bundles', () => {
  const runtimes: OperatorRuntime[] = [];
  let signed: EvidenceBundle;
  let unsigned: EvidenceBundle;
  let keyedBundle: EvidenceBundle;
  /** A job run by an agent for a person (docs/api.md, "Callers: acting for someone"). */
  let actingBundle: EvidenceBundle;
  const auditKey = 'evidence audit key';

  before(async () => {
    const directory = mkdtempSync(join(tmpdir(), 'warrant-evidence-'));
    const runtime = new OperatorRuntime({ store: `sqlite:${join(directory, 'jobs.db')}` });
    const keyed = new OperatorRuntime({
      store: `sqlite:${join(directory, 'keyed.db')}`,
      auditKey,
    });
    runtimes.push(runtime, keyed);
    const [name] = register(runtime, { execute: ({ input }) => ({ paid: input }) });
    const plan = (amount: number) => ({
      version: '1.0' as const,
      goal: 'pay',
      steps: [{ id: 'pay', capability: name as string, input: { amount } }],
    });
    // Three jobs sealed together: the bundle's proof has siblings.
    const [job] = await Promise.all([1, 2, 3].map((amount) => runtime.executePlan(plan(amount))));
    signed = (await runtime.exportJob((job as { id: string }).id, {
      signingKey: signer.privateKey,
    })) as EvidenceBundle;
    unsigned = (await runtime.exportJob((job as { id: string }).id)) as EvidenceBundle;
    keyedBundle = (await keyed.exportJob((await keyed.executePlan(plan(4))).id, {
      signingKey: signer.privateKey,
    })) as EvidenceBundle;
    const acting = await runtime.executePlan(plan(5), {
      caller: { id: 'ada', actor: { id: 'assistant', actor: { id: 'planner' } } },
    });
    actingBundle = (await runtime.exportJob(acting.id)) as EvidenceBundle;
  });
  after(async () => {
    for (const runtime of runtimes) await runtime.close();
  });

  it('round-trips: the exported bundle verifies offline, signed and unsigned', () => {
    assert.equal(signed.format, 'warrant.evidence/1');
    assert.equal(signed.hashes.length, signed.job.events.length);
    assert.equal(signed.head, signed.hashes.at(-1));
    assert.ok(signed.checkpoint !== undefined, 'sealed by a checkpoint');
    assert.equal(signed.checkpoint.entry.events, signed.job.events.length);
    assert.ok(signed.checkpoint.proof.length > 0, 'a Merkle path with siblings');
    const text = JSON.parse(JSON.stringify(signed)) as unknown;
    assert.deepEqual(verifyEvidence(text, { publicKey: signer.publicKey }), {
      ok: true,
      chain: 'recomputed',
      checkpoint: 'verified',
      signature: 'verified',
      problems: [],
    });
    const alone = verifyEvidence(JSON.parse(JSON.stringify(unsigned)));
    assert.equal(alone.ok, true);
    assert.equal(alone.signature, 'absent');
    assert.equal(verifyEvidence(text).signature, 'not checked (no public key)');
  });

  const changed = (
    name: string,
    // A bundle edited as JSON, any part of it.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    change: (bundle: Record<string, any>) => void,
    expected: string[],
    bundle: () => EvidenceBundle = () => signed,
    options: () => { publicKey?: string } = () => ({ publicKey: signer.publicKey }),
  ) =>
    it(`names the ${expected.join(' and ')} when ${name}`, () => {
      const edited = copy(bundle());
      change(edited);
      const verification = verifyEvidence(edited, options());
      assert.equal(verification.ok, false);
      assert.deepEqual(parts(verification), expected);
    });

  changed('a result is changed', (b) => (b.job.steps[0].result.paid.amount = 9), ['job']);
  changed(
    'a result is changed (unsigned)',
    (b) => (b.job.steps[0].result.paid.amount = 9),
    ['job'],
    () => unsigned,
    () => ({}),
  );
  changed('the goal is changed', (b) => (b.job.goal = 'steal'), ['job']);
  it('verifies a bundle whose caller has an actor chain', () => {
    assert.equal(verifyEvidence(copy(actingBundle)).ok, true);
    assert.deepEqual(actingBundle.job.caller?.actor?.actor, { id: 'planner' });
  });
  changed(
    'an actor id of the chain is changed (unsigned)',
    (b) => (b.job.caller.actor.actor.id = 'mallory'),
    ['job'],
    () => actingBundle,
    () => ({}),
  );
  changed(
    'the actor chain is removed (unsigned)',
    (b) => delete b.job.caller.actor,
    ['job'],
    () => actingBundle,
    () => ({}),
  );
  changed('the status is changed', (b) => (b.job.status = 'failed'), ['job']);
  changed(
    'an event is changed (unsigned)',
    (b) => (b.job.events[1].timestamp = '2000-01-01T00:00:00.000Z'),
    ['hashes'],
    () => unsigned,
    () => ({}),
  );
  changed(
    'events are reordered (unsigned)',
    (b) => b.job.events.splice(2, 2, b.job.events[3], b.job.events[2]),
    ['hashes'],
    () => unsigned,
    () => ({}),
  );
  changed(
    'the last events are cut (unsigned)',
    (b) => {
      b.job.events.splice(-2);
      b.hashes.splice(-2);
      b.head = b.hashes.at(-1);
      b.job.status = 'executing';
    },
    ['checkpoint', 'job'],
    () => unsigned,
    () => ({}),
  );
  changed('a hash is changed', (b) => (b.hashes[0] = `sha256:${'0'.repeat(64)}`), ['hashes']);
  changed('the head is changed', (b) => (b.head = b.hashes[0]), ['head', 'signature']);
  changed('the checkpoint seq is changed', (b) => (b.checkpoint.seq += 1), ['checkpoint']);
  changed('the checkpoint time is changed', (b) => (b.checkpoint.at = 'x'), ['checkpoint']);
  changed('the checkpoint previous is changed', (b) => (b.checkpoint.previous = 'x'), [
    'checkpoint',
  ]);
  changed('the checkpoint events are changed', (b) => (b.checkpoint.events += 1), ['checkpoint']);
  changed('the checkpoint root is changed', (b) => (b.checkpoint.root = b.hashes[0]), [
    'checkpoint',
  ]);
  changed('the sealed entry is changed', (b) => (b.checkpoint.entry.events -= 1), ['checkpoint']);
  changed(
    'a proof step is changed',
    (b) => (b.checkpoint.proof[0].hash = '0'.repeat(64)),
    ['checkpoint'],
    () => unsigned,
    () => ({}),
  );
  changed('exportedAt is changed', (b) => (b.exportedAt = '2000-01-01T00:00:00.000Z'), [
    'signature',
  ]);
  changed(
    'the signature is changed',
    // Its first character made another one (a signature may begin with 'A' already).
    (b) => {
      const value = String(b.signature.value);
      b.signature.value = `${value.startsWith('A') ? 'B' : 'A'}${value.slice(1)}`;
    },
    ['signature'],
  );
  changed('the signature is removed', (b) => delete b.signature, ['signature']);
  changed(
    'another key is given',
    () => {},
    ['signature'],
    () => signed,
    () => ({ publicKey: stranger.publicKey }),
  );

  it('reports a change of any one string or number of a signed bundle', () => {
    const leaves: (string | number)[][] = [];
    const walk = (value: unknown, path: (string | number)[]): void => {
      if (typeof value === 'string' || typeof value === 'number') leaves.push(path);
      else if (typeof value === 'object' && value !== null)
        for (const [key, item] of Object.entries(value))
          walk(item, [...path, Array.isArray(value) ? Number(key) : key]);
    };
    walk(copy(signed), []);
    // The embedded public key is for reference only: the key given is the one trusted.
    const checked = leaves.filter((path) => path.join('.') !== 'signature.publicKey');
    for (const path of checked) {
      const bundle = copy(signed);
      const parent = path
        .slice(0, -1)
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        .reduce<any>((value, key) => (value as Record<string, unknown>)[key], bundle);
      const key = path.at(-1) as string;
      const old = parent[key] as string | number;
      parent[key] =
        typeof old === 'number'
          ? old + 1
          : old.startsWith('a')
            ? `b${old.slice(1)}`
            : `a${old.slice(1)}`;
      const verification = verifyEvidence(bundle, { publicKey: signer.publicKey });
      assert.equal(verification.ok, false, `a change of ${path.join('.')} went unreported`);
    }
    assert.ok(checked.length > 50, `${checked.length} values changed`);
  });

  it('checks a keyed chain with its audit key, or vouched for by the signature', () => {
    const bundle = JSON.parse(JSON.stringify(keyedBundle)) as unknown;
    assert.match(String(keyedBundle.head), /^hmac-sha256:/);
    const alone = verifyEvidence(bundle);
    assert.equal(alone.ok, false);
    assert.match(alone.problems[0]?.reason ?? '', /keyed/);
    assert.equal(verifyEvidence(bundle, { auditKey }).ok, true);
    assert.equal(verifyEvidence(bundle, { publicKey: signer.publicKey }).ok, true);
    assert.equal(verifyEvidence(bundle, { auditKey: 'wrong' }).ok, false);
  });

  it('refuses what is not a bundle, and a key that is not Ed25519 PEM (EVIDENCE_KEY_INVALID)', async () => {
    assert.deepEqual(parts(verifyEvidence(null)), ['format']);
    assert.deepEqual(parts(verifyEvidence({ ...copy(signed), format: 'x' })), ['format']);
    assert.deepEqual(parts(verifyEvidence({ ...copy(signed), job: 1 })), ['job']);
    assert.deepEqual(parts(verifyEvidence({ ...copy(signed), hashes: [1] })), ['hashes']);
    assert.throws(() => verifyEvidence(copy(signed), { publicKey: 'not a key' }), {
      code: 'EVIDENCE_KEY_INVALID',
    });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    assert.throws(
      () =>
        verifyEvidence(copy(signed), {
          publicKey: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        }),
      { code: 'EVIDENCE_KEY_INVALID', message: /rsa, not Ed25519/ },
    );
    await assert.rejects(
      (runtimes[0] as OperatorRuntime).exportJob(signed.job.id, { signingKey: 'nope' }),
      { code: 'EVIDENCE_KEY_INVALID' },
    );
    assert.equal(await (runtimes[0] as OperatorRuntime).exportJob('no-such-job'), undefined);
  });
});
