/**
 * State shared by every copy of Warrant in the process: the ESM and the CommonJS builds loaded
 * together must see one capability inventory, one set of issued errors and one default runtime
 * (docs/decisions.md, "Build"). Each piece lives on globalThis under a versioned `Symbol.for` key
 * as a frozen holder of functions, defined non-writable, non-configurable and non-enumerable: the
 * functions close over private state, so nothing reachable from globalThis can be edited,
 * replaced or deleted.
 */

/**
 * The holder under `key`: the one another copy of Warrant already defined, or `create()`'s,
 * frozen and defined now. Call it lazily (on first use) unless the holder must exist at import.
 */
export function processGlobal<T extends object>(key: symbol, create: () => T): Readonly<T> {
  const existing = Reflect.getOwnPropertyDescriptor(globalThis, key);
  if (existing !== undefined && 'value' in existing) return existing.value as Readonly<T>;
  const holder = Object.freeze(create());
  Object.defineProperty(globalThis, key, {
    value: holder,
    writable: false,
    configurable: false,
    enumerable: false,
  });
  return holder;
}
