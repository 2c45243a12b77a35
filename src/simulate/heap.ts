// A binary min-heap of timed events; ties keep insertion order, so runs are deterministic.
export interface Timed {
  at: number;
  seq: number;
}

/** Omit over each member of a union (plain Omit would merge the members). */
type WithoutSeq<T> = T extends unknown ? Omit<T, 'seq'> : never;

export class EventQueue<T extends Timed> {
  private items: T[] = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  push(event: WithoutSeq<T>): void {
    const item = { ...event, seq: this.seq++ } as T;
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(a[i] as T, a[parent] as T)) break;
      [a[i], a[parent]] = [a[parent] as T, a[i] as T];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0] as T;
    const last = a.pop() as T;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l] as T, a[m] as T)) m = l;
        if (r < a.length && this.less(a[r] as T, a[m] as T)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m] as T, a[i] as T];
        i = m;
      }
    }
    return top;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  private less(x: T, y: T): boolean {
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }
}

/** mulberry32: a small seeded generator; the same seed gives the same run. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
