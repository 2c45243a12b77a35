// The one memoisation rule of the code base: a Map that never holds more than `max` entries and drops the
// least recently used one first. Every cache here memoises a pure function of its key, so eviction can only
// cost time, never change an output; the bound keeps a long-running process (the controller, the function)
// from growing with the variety of its inputs.

export interface BoundedCache<K, V> {
  /** The cached value for `key`, computing and storing it on a miss. `compute` may throw: nothing is stored. */
  get(key: K, compute: (key: K) => V): V;
  readonly size: number;
  clear(): void;
}

export function boundedCache<K, V>(max: number): BoundedCache<K, V> {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`boundedCache: max must be a positive integer`);
  const entries = new Map<K, V>();
  return {
    get(key, compute) {
      if (entries.has(key)) {
        const hit = entries.get(key) as V;
        // Re-insert so that Map order is least-recently-used first.
        entries.delete(key);
        entries.set(key, hit);
        return hit;
      }
      const value = compute(key);
      if (entries.size >= max) entries.delete(entries.keys().next().value as K);
      entries.set(key, value);
      return value;
    },
    get size() {
      return entries.size;
    },
    clear() {
      entries.clear();
    },
  };
}
