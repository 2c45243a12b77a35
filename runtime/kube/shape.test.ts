import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NODE, pick, POD, type Shape } from './shape.js';

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
    const labels = { a: '1' };
    const got = pick({ metadata: { labels } }, POD) as { metadata: { labels: object } };
    expect(got.metadata.labels).toBe(labels);
  });

  it('gives a part of its input: what it keeps is the input’s at the same path, under keys the shape names', () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    const shapeArb: fc.Arbitrary<Shape> = fc.letrec<{ s: Shape }>((tie) => ({
      s: fc.oneof(
        { depthSize: 'small' },
        fc.constant(true as const),
        fc.tuple(tie('s')),
        fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('s'), { maxKeys: 3 }),
      ),
    })).s;
    const within = (got: unknown, value: unknown, shape: Shape): void => {
      if (got === undefined) return; // left out: absent, or not of the shape's type
      if (shape === true || got === null) return expect(got).toBe(value);
      if (Array.isArray(shape)) {
        expect(Array.isArray(got) && Array.isArray(value)).toBe(true);
        (got as unknown[]).forEach((g, i) => within(g, (value as unknown[])[i], shape[0] as Shape));
        return;
      }
      for (const [k, g] of Object.entries(got)) {
        expect(Object.keys(shape)).toContain(k);
        within(g, (value as Record<string, unknown>)[k], (shape as Record<string, Shape>)[k]!);
      }
    };
    fc.assert(
      fc.property(json, shapeArb, (value, shape) => {
        within(pick(value, shape), value, shape);
      }),
    );
  });
});
