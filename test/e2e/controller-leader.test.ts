// Two replicas with --leader-elect on the real apiserver: exactly one leads (holds the Lease, runs its queue);
// killed with -9, the other takes over once the Lease expires; stopped with SIGTERM, it releases the Lease and
// the other takes over within a retry period.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useCluster } from './helpers/context.js';
import { leads, leaseHolder } from './helpers/controller-observe.js';
import { ControllerProcess } from './helpers/controller-process.js';
import { waitFor } from './helpers/k8s.js';
import { installNoderotation } from './helpers/noderotation-api.js';

describe('leader election', () => {
  const { kube, res } = useCluster();
  const controllers: ControllerProcess[] = [];
  beforeAll(() => installNoderotation());
  afterEach(async () => {
    for (const c of controllers.splice(0)) await c.kill();
  });

  it('one leader at a time; kill -9 → the other leads once the Lease expires; SIGTERM → handover', async () => {
    const ns = await res.namespace('e2e-le');
    const a = new ControllerProcess(ns, ['--leader-elect']);
    const b = new ControllerProcess(ns, ['--leader-elect']);
    controllers.push(a, b);
    await a.start();
    await b.start();
    const first = await waitFor('one of the two to lead', async () => {
      const [la, lb] = [await leads(a), await leads(b)];
      return la !== lb ? (la ? a : b) : undefined;
    });
    const second = first === a ? b : a;
    // It stays that way: the standby never leads while the leader renews.
    for (let i = 0; i < 5; i++) {
      expect(await leads(second)).toBe(false);
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(await leaseHolder(kube, ns)).toMatch(/_/);

    const killedAt = Date.now();
    await first.kill();
    await waitFor('the standby to take over', () => leads(second), { timeoutMs: 40_000, intervalMs: 250 });
    const takeover = (Date.now() - killedAt) / 1000;
    // The Lease lasts 15 s from when the standby last saw it renewed; it tries every 2–4.4 s (client-go's jitter).
    expect(takeover).toBeGreaterThanOrEqual(10);
    expect(takeover).toBeLessThanOrEqual(25);

    // A third replica joins; the leader is stopped cleanly and hands over at the candidate's next try (≤ 4.4 s).
    const c = new ControllerProcess(ns, ['--leader-elect']);
    controllers.push(c);
    await c.start();
    const stoppedAt = Date.now();
    expect(await second.stop()).toBe(0);
    await waitFor('the new replica to take over', () => leads(c), { timeoutMs: 20_000, intervalMs: 250 });
    expect((Date.now() - stoppedAt) / 1000).toBeLessThanOrEqual(6);
    expect(second.logs.some((l) => l.msg === 'stopped')).toBe(true);
  });
});
