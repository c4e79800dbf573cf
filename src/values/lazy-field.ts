/**
 * A field of a plain object computed on first read (docs/decisions.md, "The record nearly free"):
 * an enumerable accessor every reader sees as a value (property reads, `JSON.stringify`,
 * `Object.keys`, spreads, deep equality), backed by a source held in a private field stamped on
 * the object. The source is invisible (no key, no symbol: nothing reaches it through the object),
 * and objects of one shape keep one hidden class, because every field of a kind shares one getter
 * (a getter per object, or an object literal's `get`, turns the object into a slow dictionary; a
 * WeakMap of sources cost ten times as much). The target may be frozen afterwards.
 */

/** Lets a constructor add its private field to an object made elsewhere. */
// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- its constructor's return is the point
class Stamped {
  constructor(target: object) {
    return target;
  }
}

class Sourced extends Stamped {
  readonly #source: unknown;

  constructor(target: object, source: unknown) {
    super(target);
    this.#source = source;
  }

  static sourceOf(target: object): unknown {
    return (target as Sourced).#source;
  }

  static isStamped(target: object): boolean {
    return #source in target;
  }
}

/** One kind of lazy field: how its value is read from its source. Made once, at module level. */
export interface LazyField<S> {
  readonly descriptor: PropertyDescriptor;
  /** Type only: the source this kind reads. */
  readonly source?: S;
}

/** A kind of field whose value is `read(source)`, computed on each read of the field. */
export function lazyField<S>(read: (source: S) => unknown): LazyField<S> {
  return {
    descriptor: {
      get(this: object): unknown {
        return read(Sourced.sourceOf(this) as S);
      },
      enumerable: true,
      configurable: false,
    },
  };
}

/**
 * Defines `target[key]` as a field of `kind` read from `source`. An object holds one source: its
 * lazy fields, of one kind or several, all read from it.
 * @throws Error when `target` already holds another source.
 */
export function setLazyField<S>(target: object, key: string, kind: LazyField<S>, source: S): void {
  if (!Sourced.isStamped(target)) new Sourced(target, source);
  else if (Sourced.sourceOf(target) !== source)
    throw new Error(`lazy field ${key}: the object's fields already read from another source`);
  Object.defineProperty(target, key, kind.descriptor);
}
