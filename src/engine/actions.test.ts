// The catalogues are the single source of event reasons and metric observations: each entry must be the one
// documented in docs/observability.md (object, type, name), and every builder must produce a valid action.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  annotate,
  claimRef,
  deleteNodeClaim,
  event,
  EVENT_REASONS,
  OBSERVATIONS,
  observe,
  poolRef,
} from './actions.js';

const doc = readFileSync(new URL('../../docs/observability.md', import.meta.url), 'utf8');

/** Rows of the events table: | object | type | `Reason` | when |. */
function documentedEvents(): Map<string, { on: string; type: string }> {
  const out = new Map<string, { on: string; type: string }>();
  for (const m of doc.matchAll(/^\| (NodePool|NodeClaim) \| (Normal|Warning) \| `(\w+)` \|/gm))
    out.set(m[3] as string, { on: m[1] as string, type: m[2] as string });
  return out;
}

describe('the event-reason catalogue', () => {
  const documented = documentedEvents();

  it.each(Object.entries(EVENT_REASONS))('%s is documented with the same object and type', (reason, entry) => {
    expect(documented.get(reason)).toEqual({ on: entry.on, type: entry.type });
  });

  it('documents no reason the catalogue lacks (each doc row is an entry)', () => {
    expect([...documented.keys()].filter((r) => !(r in EVENT_REASONS))).toEqual([]);
  });

  it('event() takes the type from the catalogue, and the reason defaults to the message', () => {
    expect(event(claimRef('c'), 'RotationFailed', 'timed out')).toEqual({
      type: 'event',
      target: { kind: 'NodeClaim', name: 'c' },
      eventType: 'Warning',
      eventReason: 'RotationFailed',
      message: 'timed out',
      reason: 'timed out',
    });
  });
});

describe('the observation catalogue', () => {
  it.each(Object.entries(OBSERVATIONS))('%s feeds a documented metric', (_name, entry) => {
    expect(doc).toContain(`| \`${entry.metric}\` |`);
  });
});

describe('action builders', () => {
  const cand = { role: 'candidate' as const, claim: 'c' };
  it.each([
    {
      title: 'an anchor write carries onlyIfAbsent',
      action: annotate(poolRef('p'), { a: '1' }, ['b'], 'why', 'a'),
      expected: {
        type: 'annotate',
        target: poolRef('p'),
        set: { a: '1' },
        remove: ['b'],
        reason: 'why',
        onlyIfAbsent: 'a',
      },
    },
    {
      title: 'a plain annotate has no onlyIfAbsent key at all',
      action: annotate(poolRef('p'), {}, [], 'why'),
      expected: { type: 'annotate', target: poolRef('p'), set: {}, remove: [], reason: 'why' },
    },
    {
      title: 'a NodeClaim delete is preconditioned on its UID when known, and names what justifies it',
      action: deleteNodeClaim({ metadata: { name: 'c', uid: 'u1' }, spec: {} } as never, 'p', cand, 'why'),
      expected: { type: 'deleteNodeClaim', name: 'c', uid: 'u1', nodePool: 'p', target: cand, reason: 'why' },
    },
    {
      title: 'a NodeClaim delete without a known UID has no uid key',
      action: deleteNodeClaim({ metadata: { name: 'c' }, spec: {} } as never, 'p', cand, 'why'),
      expected: { type: 'deleteNodeClaim', name: 'c', nodePool: 'p', target: cand, reason: 'why' },
    },
    {
      title: 'an observation without labels has no labels key',
      action: observe('p', 'forcefulFallback', 1, 'why'),
      expected: { type: 'observe', metric: 'forcefulFallback', nodePool: 'p', value: 1, reason: 'why' },
    },
  ])('$title', ({ action, expected }) => {
    expect(action).toStrictEqual(expected);
  });
});
