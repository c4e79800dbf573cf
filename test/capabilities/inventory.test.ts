import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OperatorRuntime,
  createCapability,
  type Capability,
  type CapabilityModule,
} from '../../src/index.js';
import { capabilityInventory } from '../../src/capabilities/inventory.js';
import {
  recordingAuthorizer,
  rawCapability,
  rawModule,
  uniqueName,
} from '../support/runtime-fixtures.js';

const capability = rawCapability;
const module = rawModule;

describe('OperatorRuntime#use()', () => {
  it('registers atomically: one bad capability registers nothing of its module', () => {
    const runtime = new OperatorRuntime();
    const good = uniqueName('good');
    assert.throws(
      () =>
        runtime.use(module([capability(good), capability(uniqueName('bad'), { risk: 'admin' })])),
      {
        name: 'TypeError',
        code: 'CAPABILITY_DEFINITION_INVALID',
      },
    );
    assert.equal(runtime.describeCapability(good), undefined);
  });

  it('turns throwing getters and revoked proxies in use() arguments into coded errors, registering nothing', () => {
    const runtime = new OperatorRuntime();
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    const throwing = (target: object, key: string) =>
      Object.defineProperty(target, key, {
        enumerable: true,
        get() {
          throw new Error(`${key} getter`);
        },
      });
    const before = runtime.listCapabilities().length;
    const cases: [string, () => unknown, string][] = [
      ['a revoked module', () => revoked, 'CAPABILITY_MODULE_INVALID'],
      [
        'a throwing manifest',
        () => throwing({ capabilities: [] }, 'manifest'),
        'CAPABILITY_MODULE_INVALID',
      ],
      [
        'a revoked manifest',
        () => ({ manifest: revoked, capabilities: [] }),
        'CAPABILITY_MODULE_INVALID',
      ],
      [
        'a throwing manifest name',
        () => ({
          manifest: throwing({ version: '1', capabilities: [] }, 'name'),
          capabilities: [],
        }),
        'CAPABILITY_MODULE_INVALID',
      ],
      [
        'revoked manifest capabilities',
        () => ({ manifest: { name: 'm', version: '1', capabilities: revoked }, capabilities: [] }),
        'CAPABILITY_MODULE_INVALID',
      ],
      [
        'a throwing manifest entry',
        () => ({
          manifest: { name: 'm', version: '1', capabilities: throwing([], '0') },
          capabilities: [],
        }),
        'CAPABILITY_MODULE_INVALID',
      ],
      [
        'revoked capabilities',
        () => ({ manifest: { name: 'm', version: '1', capabilities: [] }, capabilities: revoked }),
        'CAPABILITY_MODULE_INVALID',
      ],
      ...(['name', 'version', 'description', 'risk', 'inputSchema', 'execute'] as const).map(
        (key): [string, () => unknown, string] => {
          const name = uniqueName('hostile');
          return [
            `a throwing capability ${key}`,
            () => {
              const candidate: Record<string, unknown> = { ...capability(name) };
              Reflect.deleteProperty(candidate, key);
              return module([throwing(candidate, key) as Capability], [name]);
            },
            'CAPABILITY_DEFINITION_INVALID',
          ];
        },
      ),
      [
        'a revoked capability',
        () => module([revoked as Capability], ['x']),
        'CAPABILITY_DEFINITION_INVALID',
      ],
      [
        'a revoked inputSchema',
        () => module([capability(uniqueName('hostile'), { inputSchema: revoked })]),
        'CAPABILITY_DEFINITION_INVALID',
      ],
      [
        'a throwing inputSchema field',
        () => module([capability(uniqueName('hostile'), { inputSchema: throwing({}, 'id') })]),
        'CAPABILITY_DEFINITION_INVALID',
      ],
      [
        'a throwing field type',
        () =>
          module([
            capability(uniqueName('hostile'), {
              inputSchema: { id: throwing({ required: true, description: '' }, 'type') },
            }),
          ]),
        'CAPABILITY_DEFINITION_INVALID',
      ],
    ];
    for (const [label, make, code] of cases) {
      assert.throws(() => runtime.use(make() as CapabilityModule), { code }, label);
    }
    assert.equal(runtime.listCapabilities().length, before);
  });

  it('turns throwing getters in createCapability() definitions into CAPABILITY_DEFINITION_INVALID', () => {
    const base = { name: 'hostile.create', version: '1', description: 'd', risk: 'read' };
    const throwing = (key: string, extra: object = {}) =>
      Object.defineProperty({ ...base, execute: () => 1, ...extra }, key, {
        get() {
          throw new Error(`${key} getter`);
        },
      });
    const { proxy: revoked, revoke } = Proxy.revocable([], {});
    revoke();
    for (const definition of [
      throwing('timeoutMs'),
      throwing('middleware'),
      throwing('lifecycleLogging'),
      throwing('name'),
      { ...base, execute: () => 1, middleware: revoked },
      {
        ...base,
        execute: () => 1,
        middleware: [
          Object.defineProperty({}, 'execute', {
            get() {
              throw new Error('execute getter');
            },
          }),
        ],
      },
    ]) {
      assert.throws(() => createCapability(definition as never), {
        code: 'CAPABILITY_DEFINITION_INVALID',
      });
    }
  });

  it('rejects a duplicate name whatever its version, across modules, runtimes and within one module', () => {
    const name = uniqueName('dup');
    new OperatorRuntime().use(module([capability(name)]));
    assert.throws(
      () => new OperatorRuntime().use(module([capability(name, { version: '9.9.9' })])),
      {
        code: 'CAPABILITY_ALREADY_REGISTERED',
        message: `Capability "${name}" is already registered (version "1.0.0"); names are unique whatever the version`,
      },
    );
    const twice = uniqueName('twice');
    assert.throws(
      () => new OperatorRuntime().use(module([capability(twice), capability(twice)], [twice])),
      { code: 'CAPABILITY_ALREADY_REGISTERED' },
    );
    assert.equal(new OperatorRuntime().describeCapability(twice), undefined);
  });

  it('snapshots what it registers: later edits to the capability object change nothing', async () => {
    const authorizer = recordingAuthorizer();
    const runtime = new OperatorRuntime({ authorizer });
    const name = uniqueName('snap');
    const target = capability(name, {
      inputSchema: { a: { type: 'string', required: true, description: 'A' } },
    }) as unknown as Record<string, unknown>;
    runtime.use(module([target as unknown as Capability]));
    target.risk = 'destructive';
    target.version = '6.6.6';
    target.execute = () => 'swapped';
    ((target.inputSchema as Record<string, { type: string }>).a as { type: string }).type =
      'number';
    assert.equal(runtime.describeCapability(name)?.risk, 'read');
    assert.equal(runtime.describeCapability(name)?.inputSchema.a?.type, 'string');
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 's', capability: name, input: { a: 'text' } }],
    });
    assert.equal(job.result, 'ran');
    assert.deepEqual(authorizer.calls[0]?.capability, { name, version: '1.0.0', risk: 'read' });
  });

  it('keeps one inventory per process on globalThis, shared by every runtime', () => {
    const name = uniqueName('global');
    new OperatorRuntime().use(
      module([
        createCapability({ name, version: '1', description: 'd', risk: 'read', execute: () => 1 }),
      ]),
    );
    const holder = globalThis as unknown as Record<symbol, unknown>;
    assert.equal(holder[Symbol.for('warrant.capabilityInventory.v2')], capabilityInventory());
    assert.ok(capabilityInventory().has(name));
    assert.equal(new OperatorRuntime().listCapabilities().at(-1)?.name, name);
  });
});

/** Every value Warrant keeps on globalThis (versioned `Symbol.for('warrant.…')` keys). */
function warrantGlobals(): [symbol, unknown][] {
  return Object.getOwnPropertySymbols(globalThis)
    .filter((key) => Symbol.keyFor(key)?.startsWith('warrant.') === true)
    .map((key) => [key, (globalThis as unknown as Record<symbol, unknown>)[key]]);
}

/** Tries every edit JavaScript offers on `target` (refusals are what we want). */
function tryToEdit(target: unknown): void {
  if (typeof target !== 'object' || target === null) return;
  const attempts: (() => unknown)[] = [];
  if (target instanceof Map) {
    for (const [key, value] of [...target]) {
      const record = value as { identity?: object };
      const asRead = { ...record, risk: 'read', identity: { ...record.identity, risk: 'read' } };
      attempts.push(() => target.set(key, asRead));
      attempts.push(() => target.delete(key));
    }
    attempts.push(() => target.clear());
  }
  if (target instanceof Set || target instanceof WeakSet) {
    attempts.push(() => (target as Set<object>).add({}));
  }
  for (const key of Reflect.ownKeys(target)) {
    attempts.push(() => Reflect.set(target, key, () => undefined));
    attempts.push(() => Reflect.deleteProperty(target, key));
  }
  attempts.push(() => Reflect.setPrototypeOf(target, null));
  attempts.push(() => Reflect.defineProperty(target, 'injected', { value: 1 }));
  for (const attempt of attempts) {
    try {
      attempt();
    } catch {
      // refused: what we want
    }
  }
}

describe('the process-global inventory', () => {
  it('is a frozen holder of functions on a non-writable, non-configurable global property', () => {
    capabilityInventory();
    const globals = warrantGlobals();
    assert.ok(globals.length > 0);
    for (const [key, holder] of globals) {
      const descriptor = Object.getOwnPropertyDescriptor(globalThis, key);
      assert.equal(descriptor?.writable, false, String(key));
      assert.equal(descriptor?.configurable, false, String(key));
      assert.ok(Object.isFrozen(holder), `${String(key)} holds a frozen object`);
      assert.ok(!(holder instanceof Map) && !(holder instanceof WeakSet), String(key));
      for (const value of Object.values(holder as object)) {
        assert.ok(typeof value === 'function' || Object.isFrozen(value), String(key));
      }
    }
  });

  it('cannot be edited through globalThis: a write capability stays a write, denied by the default policy', async () => {
    const name = uniqueName('global.write');
    let written = 0;
    const runtime = new OperatorRuntime();
    runtime.use(
      module([
        createCapability({
          name,
          version: '1',
          description: 'writes',
          risk: 'write',
          execute: () => ++written,
        }),
      ]),
    );
    const before = runtime.listCapabilities();
    for (const [key, holder] of warrantGlobals()) {
      tryToEdit(holder);
      const global = globalThis as unknown as Record<symbol, unknown>;
      try {
        global[key] = new Map();
      } catch {
        // refused
      }
      Reflect.deleteProperty(globalThis, key);
      // Records handed out are frozen; lists are fresh copies.
      for (const value of Object.values(holder as object)) {
        if (typeof value !== 'function') continue;
        for (const args of [[name], []]) {
          let answer: unknown;
          try {
            answer = (value as (...parameters: unknown[]) => unknown)(...args);
          } catch {
            continue;
          }
          const parts = typeof answer === 'object' && answer !== null ? Object.values(answer) : [];
          tryToEdit(answer);
          for (const part of parts) {
            tryToEdit(part);
            if (typeof part === 'object' && part !== null) Object.values(part).forEach(tryToEdit);
          }
        }
      }
    }
    // Re-registering the name (after a delete, were one possible) is refused.
    assert.throws(
      () =>
        runtime.use(
          module([
            createCapability({
              name,
              version: '1',
              description: 'now a read',
              risk: 'read',
              execute: () => ++written,
            }),
          ]),
        ),
      { code: 'CAPABILITY_ALREADY_REGISTERED' },
    );
    assert.deepEqual(runtime.listCapabilities(), before);
    const job = await runtime.executePlan({
      version: '1.0',
      steps: [{ id: 'w', capability: name }],
    });
    assert.equal(job.status, 'failed');
    assert.equal(job.error, 'Write capability requires explicit approval.');
    assert.equal(written, 0);
    await runtime.close();
  });
});
