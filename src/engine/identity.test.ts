// The placeholder's identity (issue 13): the reference's name and labels, and our rule past 63 characters.
import { describe, expect, it } from 'vitest';
import { claim, nodePool, NS, OLD } from '../../test/support/fixtures.js';
import { policyParams } from '../derivation/params.js';
import { A } from './annotations.js';
import { isPlaceholder, placeholderKey, placeholderName, surgeForLabelValue } from './identity.js';
import { placeholderPod, sizePlaceholder } from './placeholder.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const PREFIX = 'noderotation-surge-'; // 19 characters: a 44-character claim makes a 63-character name

describe('placeholderName', () => {
  it.each([
    { reason: 'a Karpenter-named claim', claim: 'general-abc12', kept: true },
    { reason: 'a 44-character claim makes exactly 63: kept', claim: 'a'.repeat(44), kept: true },
    { reason: 'a 45-character claim makes 64: shortened', claim: 'a'.repeat(45), kept: false },
    { reason: 'a 63-character claim (the longest Karpenter generates)', claim: `${'p'.repeat(57)}-x7k2q`, kept: false },
    { reason: 'a 253-character claim', claim: `${'a.b-'.repeat(63)}z`, kept: false },
  ])('$reason', ({ claim: c, kept }) => {
    const name = placeholderName(c);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(DNS_SUBDOMAIN);
    expect(name.startsWith(PREFIX)).toBe(true);
    if (kept) expect(name).toBe(`${PREFIX}${c}`);
    else expect(name).toMatch(/-[0-9a-f]{10}$/);
    expect(placeholderName(c)).toBe(name); // stable
  });

  it('keeps claims that share a long prefix apart, and cuts back to an alphanumeric end', () => {
    const a = placeholderName(`${'x'.repeat(40)}-${'y'.repeat(10)}`);
    const b = placeholderName(`${'x'.repeat(40)}-${'z'.repeat(10)}`);
    expect(a).not.toBe(b);
    expect(placeholderName(`${'x'.repeat(32)}.-${'y'.repeat(20)}`)).toMatch(/^noderotation-surge-x{32}-[0-9a-f]{10}$/);
  });
});

describe('surgeForLabelValue', () => {
  it.each([
    { reason: 'a Karpenter-named claim is its own value (as the reference writes it)', claim: 'general-abc12' },
    { reason: 'exactly 63 characters is kept', claim: 'a'.repeat(63) },
  ])('$reason', ({ claim: c }) => {
    expect(surgeForLabelValue(c)).toBe(c);
  });

  it.each([
    { reason: '64 characters is shortened', claim: 'a'.repeat(64) },
    { reason: '253 characters is shortened', claim: `${'a.b-'.repeat(63)}z` },
  ])('$reason to a valid, stable value', ({ claim: c }) => {
    const v = surgeForLabelValue(c);
    expect(v.length).toBeLessThanOrEqual(63);
    expect(v).toMatch(LABEL_VALUE);
    expect(v).toMatch(/-[0-9a-f]{10}$/);
    expect(surgeForLabelValue(c)).toBe(v);
  });
});

describe('the placeholder Pod', () => {
  const pool = nodePool();
  const params = policyParams({ nodePools: ['general'], maintenanceWindows: [] } as never);
  const build = (name: string) => {
    const { claim: c, node } = claim(name, { createdAt: OLD });
    return placeholderPod({
      pool,
      claim: c,
      node,
      params,
      sizing: sizePlaceholder(c, [], false),
      avoidNodes: [],
      namespace: NS,
      priorityClassName: 'pc',
      image: 'pause',
    });
  };

  it("carries the reference's identity: surge-for and nodepool labels, Pod-level do-not-disrupt", () => {
    const pod = build('general-abc12');
    expect(pod.metadata.name).toBe('noderotation-surge-general-abc12');
    expect(pod.metadata.labels).toMatchObject({ [A.surgeFor]: 'general-abc12', 'karpenter.sh/nodepool': 'general' });
    expect(pod.metadata.annotations).toEqual({ [A.doNotDisrupt]: 'true' });
    expect(isPlaceholder(pod)).toBe(true);
    expect(placeholderKey(pod)).toBe('general-abc12');
  });

  it('keeps the full claim name in the surge-for annotation when the label had to be shortened', () => {
    const long = 'c'.repeat(70);
    const pod = build(long);
    expect(pod.metadata.labels?.[A.surgeFor]).toBe(surgeForLabelValue(long));
    expect(pod.metadata.annotations).toEqual({ [A.doNotDisrupt]: 'true', [A.surgeFor]: long });
  });

  it('is not confused with a Pod that only looks like ours (no surge-for label)', () => {
    const pod = build('general-abc12');
    const { [A.surgeFor]: _dropped, ...labels } = pod.metadata.labels ?? {};
    expect(isPlaceholder({ ...pod, metadata: { ...pod.metadata, labels } })).toBe(false);
  });
});
