import { describe, expect, it } from 'vitest';
import type { RotationPolicy } from '../generated/api-types.js';
import { validateAgainst } from '../api/validate.js';
import { policy } from '../../test/support/fixtures.js';
import { policyErrors } from './validity.js';

/** The same policy as a status write leaves it in the controller's cache: new objects around the same spec. */
const nextVersion = (p: RotationPolicy, metadata: object = {}, status: object = { observedGeneration: 2 }) =>
  ({ ...p, metadata: { ...p.metadata, resourceVersion: '9', ...metadata }, status }) as RotationPolicy;

describe('policyErrors', () => {
  it.each([
    { reason: 'a valid policy has none', make: () => policy(), errors: 0 },
    {
      reason: 'an invalid spec is reported with its path',
      make: () => policy({ nodePools: [] as unknown as ['x'] }),
      errors: 1,
      path: 'spec.nodePools',
    },
    {
      reason: 'an invalid label is reported, though the spec is valid',
      make: () => nextVersion(policy(), { labels: { ok: 'x'.repeat(64) } }),
      errors: 1,
      path: 'metadata.labels.ok',
    },
    {
      reason: 'a status the schema does not know is not the policy’s to fail on (the engine never reads it)',
      make: () => nextVersion(policy(), {}, { unknown: true, conditions: 'not a list' }),
      errors: 0,
    },
  ])('$reason', ({ make, errors, path }) => {
    const p = make();
    const got = policyErrors(p);
    expect(got).toHaveLength(errors);
    if (path) expect(got[0]?.path).toBe(path);
    // The judgement is the schema's on what the engine reads.
    const { apiVersion, kind, metadata, spec } = p;
    expect(got).toEqual(validateAgainst('rotationPolicy', { apiVersion, kind, metadata, spec }));
  });

  it('judges a new version with the same spec, labels and annotations once, and judges again what changed', () => {
    const first = policy({ nodePools: [] as unknown as ['x'] });
    const errors = policyErrors(first);
    expect(policyErrors(nextVersion(first))).toBe(errors);
    // The same spec object, but a label that fails the schema: judged again, not taken from the memo.
    const relabelled = nextVersion(first, { labels: { bad: 'x'.repeat(64) } });
    expect(policyErrors(relabelled).map((e) => e.path)).toEqual(['metadata.labels.bad', 'spec.nodePools']);
    // A fixed spec (a new object) is judged afresh.
    expect(policyErrors({ ...first, spec: { ...first.spec, nodePools: ['general'] } })).toEqual([]);
  });
});
