// The pins file (docs/api.md, "Pinned tools"): its one format, read with --pins (a bad file is a
// usage error naming it) and written whole by `warrant mcp pin`, servers and tools in name order.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parsePins, pinsText, readPinsFile, writePinsFile } from '../../src/cli/pins-file.js';
import { UsageError } from '../../src/cli/usage-error.js';

const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;

describe('parsePins(text)', () => {
  it('reads server name → tool name → digest', () => {
    const pins = parsePins(
      JSON.stringify({ version: 1, servers: { files: { read: A, write: B } } }),
    );
    assert.deepEqual(
      [...pins].map(([server, tools]) => [server, [...tools]]),
      [
        [
          'files',
          [
            ['read', A],
            ['write', B],
          ],
        ],
      ],
    );
  });

  it('refuses anything else, saying what', () => {
    const cases: [unknown, RegExp][] = [
      [[], /expected \{ "version": 1, "servers"/],
      [{ version: 2, servers: {} }, /expected \{ "version": 1/],
      [{ version: 1 }, /expected \{ "version": 1/],
      [
        { version: 1, servers: { 'a b': {} } },
        /the server name "a b" is not one --mcp-server accepts/,
      ],
      [{ version: 1, servers: { files: [] } }, /servers\.files must map tool names to digests/],
      [
        { version: 1, servers: { files: { read: 'sha256:ABC' } } },
        /servers\.files\.read must be a digest/,
      ],
      [
        { version: 1, servers: { files: { read: A.toUpperCase() } } },
        /servers\.files\.read must be a digest/,
      ],
    ];
    for (const [value, message] of cases)
      assert.throws(() => parsePins(JSON.stringify(value)), message);
    assert.throws(() => parsePins('not json'));
  });
});

describe('readPinsFile(file) and writePinsFile(file, pins)', () => {
  it('writes servers and tools in name order, whole, and reads back what it wrote', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warrant-pins-file-'));
    const file = join(dir, 'pins.json');
    const pins = new Map([
      [
        'zeta',
        new Map([
          ['b', B],
          ['a', A],
        ]),
      ],
      ['alpha', new Map([['x', A]])],
    ]);
    writePinsFile(file, pins);
    const text = readFileSync(file, 'utf8');
    assert.equal(text, pinsText(pins));
    assert.deepEqual(JSON.parse(text), {
      version: 1,
      servers: { alpha: { x: A }, zeta: { a: A, b: B } },
    });
    assert.deepEqual(Object.keys((JSON.parse(text) as { servers: object }).servers), [
      'alpha',
      'zeta',
    ]);
    assert.deepEqual(
      readPinsFile(file),
      new Map([
        ['alpha', new Map([['x', A]])],
        [
          'zeta',
          new Map([
            ['a', A],
            ['b', B],
          ]),
        ],
      ]),
    );
    assert.deepEqual(readdirSync(dir), ['pins.json'], 'no temporary file left');
  });

  it('is a usage error naming the file when it cannot be read, is not a pins file, or cannot be written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warrant-pins-file-'));
    assert.throws(
      () => readPinsFile(join(dir, 'missing.json')),
      (error: Error) => {
        assert.ok(error instanceof UsageError);
        assert.match(error.message, /^--pins .*missing\.json: cannot read it \(/);
        return true;
      },
    );
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"version":1,"servers":{"s":{"t":"x"}}}');
    assert.throws(() => readPinsFile(bad), {
      name: 'UsageError',
      message: /^--pins .*bad\.json: not a pins file \(servers\.s\.t must be a digest/,
    });
    assert.throws(() => writePinsFile(join(dir, 'no-such-dir', 'pins.json'), new Map()), {
      name: 'UsageError',
      message: /: cannot write it \(/,
    });
  });
});
