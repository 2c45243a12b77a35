// The RotationPolicy status reconciler against the simulation's apiserver (its merge patches, resourceVersion
// preconditions and status subresource): what it writes, when it writes nothing, and how a lost race comes back.
import { describe, expect, it } from 'vitest';
import type { PoolReport } from '../../src/engine/types.js';
import type { RotationPolicy } from '../../src/generated/api-types.js';
import { policy, poolReport } from '../../test/support/fixtures.js';
import { ApiServer } from '../../test/sim/apiserver.js';
import { directClient } from '../../test/sim/direct.js';
import { jsonLogger } from '../log.js';
import { ManualClock } from '../../runtime/queue/clock.js';
import { PolicyStatusReconciler, ROTATIONPOLICIES, STATUS_RETRY_MS } from './reconciler.js';

const T0 = Date.parse('2027-01-04T00:00:00Z');
const RESOURCE = 'noderotation.io/v1alpha1/rotationpolicies';

/**
 * An apiserver holding policy `p`, the reconciler over it, and the writes the controller made. `cachedVersion`:
 * the version the policies' cache holds, when the watch has not delivered the latest yet.
 */
function setup(reports: PoolReport[], cachedVersion?: () => string | undefined) {
  const clock = new ManualClock(T0);
  const server = new ApiServer({ now: () => clock.now() });
  server.seed(ROTATIONPOLICIES, policy({}, 'p') as unknown as Parameters<ApiServer['seed']>[1]);
  // What the policies' watch cache would hold: the stored object as the API serves it.
  const get = (name: string): RotationPolicy | undefined => {
    const o = server.get(RESOURCE, name);
    return o
      ? ({ apiVersion: 'noderotation.io/v1alpha1', kind: 'RotationPolicy', ...o } as unknown as RotationPolicy)
      : undefined;
  };
  const versionOf = (name: string): string | undefined => server.get(RESOURCE, name)?.metadata.resourceVersion;
  const reconciler = new PolicyStatusReconciler({
    client: directClient(server),
    clock,
    log: jsonLogger('error', () => undefined),
    policies: { get, resourceVersionOf: cachedVersion ?? versionOf },
  });
  for (const r of reports) reconciler.report(r.nodePool, r);
  const writes = () => server.writes.filter((w) => w.actor === 'controller').map((w) => `${w.verb} ${w.subresource}`);
  const status = () => server.get(RESOURCE, 'p')?.status as Record<string, unknown> | undefined;
  return { server, clock, reconciler, writes, status };
}

describe('the RotationPolicy status reconciler', () => {
  it.each([
    {
      reason: 'two governed pools, one rotating: counted, Reconciling',
      reports: [poolReport({ nodePool: 'a' }), poolReport({ nodePool: 'b', inProgress: true, activeRotation: 'c1' })],
      expected: { matchedNodePools: 2, rotatingNodePools: 1 },
    },
    {
      reason: 'a pool governed by another policy does not count',
      reports: [poolReport({ nodePool: 'a' }), poolReport({ nodePool: 'b', policy: 'q' })],
      expected: { matchedNodePools: 1, rotatingNodePools: 0 },
    },
    {
      reason: 'no pool left (the last one moved away or was deleted): the counts drop to zero',
      reports: [],
      expected: { matchedNodePools: 0, rotatingNodePools: 0 },
    },
  ])('$reason; a second pass writes nothing', async ({ reports, expected }) => {
    const { reconciler, writes, status } = setup(reports);
    expect(await reconciler.reconcile('p')).toEqual({});
    expect(status()).toMatchObject({ observedGeneration: 1, ...expected });
    expect(await reconciler.reconcile('p')).toEqual({});
    expect(writes()).toEqual(['patch status']);
  });

  it('a status written meanwhile by another is not replaced by one that did not see it: 409, soon again', async () => {
    let cached: string | undefined;
    const { server, clock, reconciler, writes, status } = setup([poolReport({ nodePool: 'a' })], () => cached);
    cached = server.get(RESOURCE, 'p')?.metadata.resourceVersion;
    const other = { conditions: [], matchedNodePools: 7 };
    server.handle('other', {
      method: 'PATCH',
      path: `${ROTATIONPOLICIES}/p/status`,
      contentType: 'application/merge-patch+json',
      body: { status: other },
    });
    expect(await reconciler.reconcile('p')).toEqual({ requeueAt: clock.now() + STATUS_RETRY_MS });
    expect(status()).toMatchObject(other);
    expect(writes()).toEqual([]);
    // The watch delivers the write: computed again on it, ours replaces it.
    cached = server.get(RESOURCE, 'p')?.metadata.resourceVersion;
    expect(await reconciler.reconcile('p')).toEqual({});
    expect(status()).toMatchObject({ matchedNodePools: 1 });
    expect(writes()).toEqual(['patch status']);
  });

  it('a pool reported gone no longer counts: its policy is computed again without it', async () => {
    const { reconciler, status } = setup([poolReport({ nodePool: 'a' }), poolReport({ nodePool: 'b' })]);
    reconciler.report('b', undefined);
    expect(await reconciler.reconcile('p')).toEqual({});
    expect(status()).toMatchObject({ matchedNodePools: 1 });
  });

  it('a policy that is gone: nothing read, nothing written', async () => {
    const { reconciler, writes } = setup([poolReport({ nodePool: 'a' })]);
    expect(await reconciler.reconcile('gone')).toEqual({});
    expect(writes()).toEqual([]);
  });
});
