import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Canon, each, intern, NODE, pick, POD, shared, type Shape } from './shape.js';

describe('pick', () => {
  it.each([
    {
      reason: 'keeps the keys the shape names, recursively, and drops the others',
      value: { a: { b: 1, c: 2 }, d: 3 },
      shape: { a: { b: true } },
      want: { a: { b: 1 } },
    },
    {
      reason: 'a list shape applies to each member',
      value: { l: [{ k: 1, x: 0 }, { k: 2 }] },
      shape: { l: [{ k: true }] },
      want: { l: [{ k: 1 }, { k: 2 }] },
    },
    {
      reason: 'a value of another type than the shape expects is left out; null is kept',
      value: { l: 'not a list', o: [1], n: null },
      shape: { l: [true], o: { k: true }, n: { k: true } },
      want: { n: null },
    },
    {
      reason: 'a Node keeps its conditions’ type and status, not their heartbeat times',
      value: {
        metadata: { name: 'n', managedFields: [{}] },
        status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: 'x' }], images: [{}] },
      },
      shape: NODE,
      want: { metadata: { name: 'n' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } },
    },
  ])('$reason', ({ value, shape, want }) => {
    expect(pick(value, shape as Shape)).toEqual(want);
  });

  it('keeps a value named whole by reference', () => {
    const tolerations = [{ key: 'a' }];
    const got = pick({ spec: { tolerations } }, POD) as { spec: { tolerations: object } };
    expect(got.spec.tolerations).toBe(tolerations);
  });

  it('keeps a shared part as a canonical copy: equal parts of two objects are one frozen value', () => {
    const decode = (): unknown => JSON.parse(JSON.stringify({ metadata: { labels: { pool: 'p', zone: 'z' } } }));
    const a = Object.freeze(decode()) as { metadata: { labels: Record<string, string> } };
    const got = pick(a, POD) as { metadata: { labels: Record<string, string> } };
    expect(got.metadata.labels).toEqual({ pool: 'p', zone: 'z' });
    expect(got.metadata.labels).not.toBe(a.metadata.labels);
    expect(Object.isFrozen(got.metadata.labels)).toBe(true);
    const again = pick(decode(), { metadata: { labels: shared() } }) as typeof got;
    expect(again.metadata.labels).toBe(got.metadata.labels);
  });
  it("keeps a map's members as each(…) says, the map itself an object's own: a Node's labels", () => {
    const labels = (host: string): unknown =>
      JSON.parse(JSON.stringify({ metadata: { labels: { 'kubernetes.io/hostname': host, zone: 'zone-a' } } }));
    const a = pick(labels('n1'), NODE) as { metadata: { labels: Record<string, string> } };
    const b = pick(labels('n2'), NODE) as typeof a;
    expect(a.metadata.labels).toEqual({ 'kubernetes.io/hostname': 'n1', zone: 'zone-a' });
    expect(b.metadata.labels).toEqual({ 'kubernetes.io/hostname': 'n2', zone: 'zone-a' });
    // Not a canonical value: even equal maps stay each Node's own (shared(…) would give one frozen map).
    const again = pick(labels('n1'), NODE) as typeof a;
    expect(again.metadata.labels).not.toBe(a.metadata.labels);
    expect(Object.isFrozen(a.metadata.labels)).toBe(false);
    const shape: Shape = { m: each({ k: true }) };
    expect(pick({ m: { x: { k: 1, drop: 2 }, y: 'not an object' } }, shape)).toEqual({ m: { x: { k: 1 } } });
    expect(pick({ m: ['a list'] }, shape)).toEqual({});
    const proto = pick(JSON.parse('{"m":{"__proto__":{"k":1}}}'), shape) as { m: object };
    expect(Object.getPrototypeOf(proto.m)).toBe(Object.prototype);
    expect(Object.keys(proto.m)).toEqual(['__proto__']);
  });
});

describe('Canon', () => {
  const canonical = (v: unknown, c = new Canon({ values: 64 }, 16)): unknown => c.of(v);

  it('gives one value for equal values, and shares the equal parts of values that differ', () => {
    const c = new Canon();
    const a = c.of(JSON.parse('[{"k":"zone","v":["a"]},{"k":"pool","v":["p1"]}]')) as object[];
    const b = c.of(JSON.parse('[{"k":"zone","v":["a"]},{"k":"pool","v":["p2"]}]')) as object[];
    expect(a).not.toBe(b);
    expect(a[0]).toBe(b[0]);
    expect(c.of(JSON.parse(JSON.stringify(a)))).toBe(a);
  });

  it('keeps at most its bound of objects and lists, so values no object holds do not pile up', () => {
    const c = new Canon({ values: 3 }, 4);
    for (const v of [['a'], ['b'], ['c'], ['d']]) c.of(v);
    expect(c.size.values).toBe(3);
    for (const s of ['a', 'b', 'x'.repeat(5)]) expect(c.of(s)).toBe(s); // strings: no table of ours
    expect(c.size.values).toBe(3);
  });

  it('intern gives an equal string, whatever the string (index-like, empty, a key of Object.prototype)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constantFrom('0', '42', '4294967295', '', '__proto__', 'toString')), (s) => {
        expect(intern(s)).toBe(s);
        expect(intern(s)).toBe(intern(s.slice(0)));
      }),
    );
    expect(Object.keys(Object.prototype)).toEqual([]); // nothing was left on any prototype
  });

  it('gives an equal copy, deeply frozen, never its input or a part of it (the input may be frozen)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        const got = canonical(v);
        expect(got).toEqual(v);
        const objects = (x: unknown, out: Set<unknown>): Set<unknown> => {
          if (x !== null && typeof x === 'object') {
            out.add(x);
            for (const y of Object.values(x)) objects(y, out);
          }
          return out;
        };
        const mine = objects(v, new Set());
        for (const o of objects(got, new Set())) {
          expect(mine.has(o)).toBe(false);
          expect(Object.isFrozen(o)).toBe(true);
        }
      }),
    );
  });
});
