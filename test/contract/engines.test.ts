// Every package an install of Warrant brings (package-lock.json, not dev, not optional) accepts
// the Node.js of package.json's `engines` (>= 20.19): otherwise npm warns EBADENGINE on Node 20
// (issue 47: cookie 2, through fastify's light-my-request, asked for Node 22; package.json
// `overrides` pins cookie 1, whose API light-my-request uses, docs/decisions.md).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

type Version = [number, number, number];

function versionOf(text: string): Version | undefined {
  const match = /^v?(\d+|x|\*)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$/.exec(text.trim());
  if (match === null) return undefined;
  return [1, 2, 3].map((index) => {
    const part = match[index];
    return part === undefined || part === 'x' || part === '*' ? -1 : Number(part);
  }) as Version;
}

function compare(a: Version, b: Version): number {
  for (let index = 0; index < 3; index++) {
    const left = a[index] as number;
    const right = Math.max(0, b[index] as number);
    if (left !== right) return left - right;
  }
  return 0;
}

/** Whether `node` satisfies one comparator (`>=20`, `^18`, `20.x`, `*`, `>= 16.0.0`). */
function satisfiesComparator(node: Version, comparator: string): boolean {
  const match = /^(>=|<=|>|<|=|\^|~)?\s*(.+)$/.exec(comparator.trim());
  const wanted = match === null ? undefined : versionOf(match[2] as string);
  assert.ok(match !== null && wanted !== undefined, `cannot read the range ${comparator}`);
  const operator = match[1] ?? '=';
  const order = compare(node, wanted);
  if (operator === '>=') return order >= 0;
  if (operator === '>') return order > 0;
  if (operator === '<=') return order <= 0;
  if (operator === '<') return order < 0;
  // `^`, `~`, `=` and wildcards: the same major (and minor for `~`), at least the version given.
  if (wanted[0] !== -1 && node[0] !== wanted[0]) return false;
  if (operator === '~' && wanted[1] !== -1 && node[1] !== wanted[1]) return false;
  if (operator === '=' && wanted[1] !== -1 && node[1] !== wanted[1]) return false;
  return order >= 0;
}

function satisfies(node: Version, range: string): boolean {
  return range.split('||').some((alternative) => {
    const comparators = alternative
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    return comparators.every((comparator) => satisfiesComparator(node, comparator));
  });
}

describe('engines of what an install brings', () => {
  it('every production dependency accepts the oldest Node.js Warrant supports', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
      engines: { node: string };
    };
    assert.equal(manifest.engines.node, '>=20.19');
    const oldest: Version = [20, 19, 0];
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
      packages: Record<
        string,
        { version?: string; dev?: boolean; optional?: boolean; engines?: { node?: string } }
      >;
    };
    const refusing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path === '' || entry.dev === true || entry.optional === true) continue;
      const range = entry.engines?.node;
      if (range !== undefined && !satisfies(oldest, range))
        refusing.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version}: ${range}`);
    }
    assert.deepEqual(refusing, []);
  });

  it('reads ranges as npm does', () => {
    const node: Version = [20, 19, 0];
    for (const range of ['>=20', '>= 16.0.0', '^18 || ^20 || >= 21', '20.x || 22.x', '*', '>=18'])
      assert.equal(satisfies(node, range), true, range);
    for (const range of ['>=22', '^18', '21.x', '>=20.20', '<20'])
      assert.equal(satisfies(node, range), false, range);
  });
});
