import { describe, expect, it } from 'vitest';
import { ManualClock } from '../queue/clock.js';
import { LeaderElector, type LeaseStore, type StoredLease } from './elector.js';
import { leaseStep, observe, type LeaseRecord } from './lease.js';

const cfg = { identity: 'me', leaseDurationSeconds: 15 };
const held = (holder: string, transitions = 3): LeaseRecord => ({
  holder,
  durationSeconds: 15,
  acquireTime: 1000,
  renewTime: 2000,
  transitions,
});

describe('leaseStep', () => {
  const cases: {
    reason: string;
    record: LeaseRecord | null;
    exists: boolean;
    seenAt: number;
    now: number;
    expect: { write: 'create' | 'update' | null; holder?: string; transitions?: number };
  }[] = [
    {
      reason: 'no Lease object: create it as holder',
      record: null,
      exists: false,
      seenAt: 0,
      now: 5,
      expect: { write: 'create', holder: 'me', transitions: 0 },
    },
    {
      reason: 'our own lease: renew, keep the transition count',
      record: held('me'),
      exists: true,
      seenAt: 0,
      now: 5,
      expect: { write: 'update', holder: 'me', transitions: 3 },
    },
    {
      reason: 'held by another, seen changing 14.999 s ago: respect it',
      record: held('other'),
      exists: true,
      seenAt: 0,
      now: 14_999,
      expect: { write: null },
    },
    {
      reason: 'held by another, unchanged for the lease duration: take over, one more transition',
      record: held('other'),
      exists: true,
      seenAt: 0,
      now: 15_000,
      expect: { write: 'update', holder: 'me', transitions: 4 },
    },
    {
      reason: 'released (empty holder): take it at once',
      record: held(''),
      exists: true,
      seenAt: 0,
      now: 1,
      expect: { write: 'update', holder: 'me', transitions: 4 },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const step = leaseStep({ record: c.record, seenAt: c.seenAt }, c.exists, cfg, c.now);
      expect(step.write).toBe(c.expect.write);
      if (step.write !== null) {
        expect(step.record.holder).toBe(c.expect.holder);
        expect(step.record.transitions).toBe(c.expect.transitions);
        expect(step.record.renewTime).toBe(c.now);
      }
    });
  }

  it('expiry is measured from when we saw the record change, not from its renewTime (clock skew)', () => {
    const skewed = { ...held('other'), renewTime: -1e12 }; // the holder's clock is far behind ours
    let obs = observe(null, skewed, 100_000);
    expect(leaseStep(obs, true, cfg, 110_000).write).toBeNull();
    obs = observe(obs, { ...skewed, renewTime: -1e12 + 2000 }, 114_000); // renewed: the clock restarts
    expect(leaseStep(obs, true, cfg, 125_000).write).toBeNull();
    expect(leaseStep(obs, true, cfg, 129_000).write).toBe('update');
  });
});

/** An in-memory Lease with the apiserver's optimistic concurrency: a stale resourceVersion is a conflict. */
class MemoryLease implements LeaseStore {
  stored: StoredLease | null = null;
  private rv = 0;
  failFor = new Set<string>();
  constructor(private readonly who = '') {}
  view(who: string): LeaseStore {
    const inner = this as MemoryLease;
    return {
      get: async () => {
        if (inner.failFor.has(who)) throw new Error('apiserver unreachable');
        return Promise.resolve(inner.stored && { ...inner.stored });
      },
      create: async (record) => {
        if (inner.failFor.has(who)) throw new Error('apiserver unreachable');
        if (inner.stored) throw new Error('AlreadyExists');
        inner.stored = { record, resourceVersion: String(++inner.rv) };
        return Promise.resolve();
      },
      update: async (record, resourceVersion) => {
        if (inner.failFor.has(who)) throw new Error('apiserver unreachable');
        if (inner.stored?.resourceVersion !== resourceVersion) throw new Error('Conflict');
        inner.stored = { record, resourceVersion: String(++inner.rv) };
        return Promise.resolve();
      },
    };
  }
  get(): Promise<StoredLease | null> {
    return this.view(this.who).get();
  }
  create(r: LeaseRecord): Promise<void> {
    return this.view(this.who).create(r);
  }
  update(r: LeaseRecord, rv: string): Promise<void> {
    return this.view(this.who).update(r, rv);
  }
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

function candidate(identity: string, lease: MemoryLease, clock: ManualClock) {
  const events: string[] = [];
  const e = new LeaderElector({
    identity,
    store: lease.view(identity),
    clock,
    leaseDurationSeconds: 15,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    onStartedLeading: () => events.push(`start@${clock.now()}`),
    onStoppedLeading: () => events.push(`stop@${clock.now()}`),
  });
  return { e, events };
}

async function run(clock: ManualClock, ms: number, step = 500): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    await settle();
  }
}

describe('LeaderElector', () => {
  it('of two candidates exactly one leads, and keeps leading while it renews', async () => {
    const clock = new ManualClock(1_000_000);
    const lease = new MemoryLease();
    const a = candidate('a', lease, clock);
    const b = candidate('b', lease, clock);
    a.e.start();
    b.e.start();
    await run(clock, 60_000);
    expect([a.e.isLeader, b.e.isLeader].filter(Boolean)).toHaveLength(1);
    expect(a.events.length + b.events.length).toBe(1);
  });

  it(
    'a leader cut off from the apiserver stops acting by renewDeadline; the other takes over after the lease ' +
      'duration, never earlier',
    async () => {
      const clock = new ManualClock(1_000_000);
      const lease = new MemoryLease();
      const a = candidate('a', lease, clock);
      a.e.start();
      await run(clock, 1000);
      expect(a.e.isLeader).toBe(true);
      const b = candidate('b', lease, clock);
      b.e.start();
      await run(clock, 4000);
      lease.failFor.add('a');
      const cutAt = clock.now();
      await run(clock, 30_000);
      const stoppedAt = Number(a.events.find((x) => x.startsWith('stop@'))?.slice(5));
      const startedAt = Number(b.events.find((x) => x.startsWith('start@'))?.slice(6));
      expect(stoppedAt - cutAt).toBeLessThanOrEqual(10_000 + 2_000);
      expect(startedAt).toBeGreaterThan(stoppedAt);
      expect(startedAt - cutAt).toBeGreaterThanOrEqual(15_000 - 2_000);
      expect(startedAt - cutAt).toBeLessThanOrEqual(15_000 + 2_000 + 2_000);
      expect(lease.stored?.record?.holder).toBe('b');
      expect(lease.stored?.record?.transitions).toBe(1);
    },
  );

  it('a leader that stops releases the lease, and the next candidate takes it within one retry period', async () => {
    const clock = new ManualClock(1_000_000);
    const lease = new MemoryLease();
    const a = candidate('a', lease, clock);
    a.e.start();
    await run(clock, 1000);
    const b = candidate('b', lease, clock);
    b.e.start();
    await run(clock, 3000);
    const stop = a.e.stop();
    await settle();
    await stop;
    expect(lease.stored?.record?.holder).toBe('');
    const releasedAt = clock.now();
    await run(clock, 2500);
    const startedAt = Number(b.events.find((x) => x.startsWith('start@'))?.slice(6));
    expect(startedAt - releasedAt).toBeLessThanOrEqual(2_500);
    expect(a.e.isLeader).toBe(false);
  });
});
