/**
 * The one JSON encoding of job values (inputs, results, metadata) for the durable stores and
 * for output at the edges: any value, including what JSON cannot hold, becomes a JSON value
 * without throwing. bigint -> decimal string; function -> "[Function name]"; symbol -> its
 * description string; NaN and ±Infinity -> "NaN" / "Infinity" / "-Infinity"; Date -> ISO string
 * (invalid -> null); Map -> object of its entries; Set -> array; undefined in an array -> null;
 * undefined properties are dropped; a cycle -> "[Circular]"; deeper than 200 levels ->
 * "[Too deep]"; a value whose getters or proxy traps throw -> "[Unreadable]".
 */
export function toJsonSafe(value: unknown): unknown {
  const seen = new WeakSet<object>();
  const walk = (current: unknown, depth: number): unknown => {
    if (typeof current === 'bigint') return current.toString();
    if (typeof current === 'function') return `[Function ${current.name || 'anonymous'}]`;
    if (typeof current === 'symbol') return current.toString();
    if (typeof current === 'number') return Number.isFinite(current) ? current : String(current);
    if (typeof current !== 'object' || current === null) return current;
    if (depth > 200) return '[Too deep]';
    if (seen.has(current)) return '[Circular]';
    seen.add(current);
    try {
      if (current instanceof Date)
        return Number.isNaN(current.getTime()) ? null : current.toISOString();
      if (current instanceof Map) return walk(Object.fromEntries(current), depth + 1);
      if (current instanceof Set) return walk([...current], depth + 1);
      if (Array.isArray(current))
        return current.map((item) => (item === undefined ? null : walk(item, depth + 1)));
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(current)) {
        const item = walk((current as Record<string, unknown>)[key], depth + 1);
        if (item !== undefined)
          Object.defineProperty(out, key, {
            value: item,
            enumerable: true,
            writable: true,
            configurable: true,
          });
      }
      return out;
    } catch {
      return '[Unreadable]';
    } finally {
      seen.delete(current);
    }
  };
  return walk(value, 0);
}
