import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, NotLeader, type KubeApi, type RequestOptions } from '../kube/client.js';
import { ManualClock } from '../queue/clock.js';
import { LeaderElector, type LeaseStore, type StoredLease } from './elector.js';
import { apiLeaseStore } from './lease-store.js';
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
      // The wall clock reads something else entirely: expiry is decided on the monotonic reading alone, and
      // the written times are wall time.
      const wall = 1_700_000_000_000 + c.now;
      const step = leaseStep({ record: c.record, seenAt: c.seenAt }, c.exists, cfg, { mono: c.now, wall });
      expect(step.write).toBe(c.expect.write);
      if (step.write !== null) {
        expect(step.record.holder).toBe(c.expect.holder);
        expect(step.record.transitions).toBe(c.expect.transitions);
        expect(step.record.renewTime).toBe(wall);
      }
    });
  }

  it('expiry is measured from when we saw the record change, not from its renewTime (clock skew)', () => {
    const skewed = { ...held('other'), renewTime: -1e12 }; // the holder's clock is far behind ours
    const at = (mono: number) => ({ mono, wall: mono });
    let obs = observe(null, skewed, 100_000);
    expect(leaseStep(obs, true, cfg, at(110_000)).write).toBeNull();
    obs = observe(obs, { ...skewed, renewTime: -1e12 + 2000 }, 114_000); // renewed: the clock restarts
    expect(leaseStep(obs, true, cfg, at(125_000)).write).toBeNull();
    expect(leaseStep(obs, true, cfg, at(129_000)).write).toBe('update');
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
        return Promise.resolve(inner.stored.resourceVersion);
      },
      update: async (record, resourceVersion) => {
        if (inner.failFor.has(who)) throw new Error('apiserver unreachable');
        if (inner.stored?.resourceVersion !== resourceVersion) throw new Error('Conflict');
        inner.stored = { record, resourceVersion: String(++inner.rv) };
        return Promise.resolve(inner.stored.resourceVersion);
      },
    };
  }
  get(): Promise<StoredLease | null> {
    return this.view(this.who).get();
  }
  create(r: LeaseRecord): Promise<string> {
    return this.view(this.who).create(r);
  }
  update(r: LeaseRecord, rv: string): Promise<string> {
    return this.view(this.who).update(r, rv);
  }
  /** Someone else's write that leaves the record as it is (a label edit): the resourceVersion moves on. */
  touch(): void {
    if (this.stored) this.stored = { ...this.stored, resourceVersion: String(++this.rv) };
  }
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/** The candidate's jitter, deterministic: fractions across [0, 1) in a fixed cycle. */
function jitter(): () => number {
  const fractions = [0.1, 0.9, 0.5, 0.99, 0];
  let i = 0;
  return () => fractions[i++ % fractions.length] as number;
}

function candidate(identity: string, lease: MemoryLease, clock: ManualClock) {
  const events: string[] = [];
  /** Per start: the resourceVersion it was told, and the Lease's at that moment. */
  const starts: { told: string | null; lease: string | undefined }[] = [];
  const e = new LeaderElector({
    identity,
    store: lease.view(identity),
    clock,
    leaseDurationSeconds: 15,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    random: jitter(),
    onStartedLeading: (rv) => {
      events.push(`start@${clock.now()}`);
      starts.push({ told: rv, lease: lease.stored?.resourceVersion });
    },
    onStoppedLeading: () => events.push(`stop@${clock.now()}`),
  });
  return { e, events, starts };
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
      // b sees a's last renew within one of its tries (≤ 4.4 s, jittered) and takes over at its first try
      // after the lease duration from then.
      expect(startedAt - cutAt).toBeLessThanOrEqual(15_000 + 2 * 4_400);
      expect(lease.stored?.record?.holder).toBe('b');
      expect(lease.stored?.record?.transitions).toBe(1);
      // A leadership taken over begins at the resourceVersion of the write that took the Lease, later than every
      // write of the leader before (what the new leader's caches must show before it acts); one that created the
      // Lease had no leader before it (null).
      expect(a.starts).toEqual([{ told: null, lease: '1' }]);
      expect(b.starts).toHaveLength(1);
      expect(b.starts[0]?.told).toBe(b.starts[0]?.lease);
      expect(Number(b.starts[0]?.told)).toBeGreaterThan(1);
    },
  );

  it('a leader that stops releases the lease, and the next candidate takes it at its next try', async () => {
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
    await run(clock, 5000);
    const startedAt = Number(b.events.find((x) => x.startsWith('start@'))?.slice(6));
    // A candidate's next try: within retryPeriod × 2.2 (4.4 s), plus the test clock's 500 ms steps.
    expect(startedAt - releasedAt).toBeLessThanOrEqual(4_400 + 500);
    expect(a.e.isLeader).toBe(false);
  });
});

/** A Lease store whose requests never answer (a hung connection), once `hang` names the request kind. */
function hanging(store: LeaseStore): { store: LeaseStore; hang: Set<'get' | 'update'>; signals: AbortSignal[] } {
  const hang = new Set<'get' | 'update'>();
  const signals: AbortSignal[] = [];
  const never = <T>(signal: AbortSignal | undefined): Promise<T> => {
    if (signal) signals.push(signal);
    return new Promise<T>(() => undefined);
  };
  return {
    hang,
    signals,
    store: {
      get: (signal) => (hang.has('get') ? never(signal) : store.get(signal)),
      create: (record, signal) => store.create(record, signal),
      update: (record, rv, signal) => (hang.has('update') ? never(signal) : store.update(record, rv, signal)),
    },
  };
}

/**
 * A candidate whose every event and every request is recorded with its start (monotonic): a read with the record
 * it read, a write with the record it wrote. A try starts with its first request (no time passes before it).
 */
function watched(identity: string, store: LeaseStore, clock: ManualClock, random = jitter()) {
  const events: { what: 'start' | 'stop'; mono: number; why?: string }[] = [];
  const tries: { mono: number; kind: 'get' | 'create' | 'update'; record: string }[] = [];
  const e = new LeaderElector({
    identity,
    store: {
      get: async (signal) => {
        const mono = clock.mono();
        const got = await store.get(signal);
        tries.push({ mono, kind: 'get', record: JSON.stringify(got?.record ?? null) });
        return got;
      },
      create: (r, s) => {
        tries.push({ mono: clock.mono(), kind: 'create', record: JSON.stringify(r) });
        return store.create(r, s);
      },
      update: (r, rv, s) => {
        tries.push({ mono: clock.mono(), kind: 'update', record: JSON.stringify(r) });
        return store.update(r, rv, s);
      },
    },
    clock,
    leaseDurationSeconds: 15,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    random,
    onStartedLeading: () => events.push({ what: 'start', mono: clock.mono() }),
    onStoppedLeading: (why) => events.push({ what: 'stop', mono: clock.mono(), why }),
  });
  const at = (what: 'start' | 'stop'): number => events.find((x) => x.what === what)?.mono ?? NaN;
  return { e, events, tries, at };
}

/** `a` leads (it started 1 s earlier), `b` has just started campaigning; both on one Lease and one clock. */
async function leaderAndFollower(clock: ManualClock) {
  const lease = new MemoryLease();
  const a = watched('a', lease.view('a'), clock);
  const b = watched('b', lease.view('b'), clock);
  a.e.start();
  await run(clock, 1000);
  b.e.start();
  return { lease, a, b };
}

describe('LeaderElector: when it tries', () => {
  it.each([
    { reason: 'the fraction at its least: the candidate tries every retry period', fraction: 0, gap: 2_000 },
    { reason: 'half way: retry period × 1.6', fraction: 0.5, gap: 3_200 },
    { reason: 'near its most: retry period × 2.2, less a rounding', fraction: 0.999, gap: 4_398 },
  ])('a candidate, jittered as client-go: $reason', async ({ fraction, gap }) => {
    const clock = new ManualClock(1_000_000);
    const lease = new MemoryLease();
    const a = watched('a', lease.view('a'), clock);
    a.e.start();
    await run(clock, 1000);
    const b = watched('b', lease.view('b'), clock, () => fraction);
    b.e.start();
    await run(clock, 12_000, 1);
    const tries = b.tries.map((t) => t.mono);
    const gaps = tries.slice(1).map((t, i) => t - (tries[i] as number));
    expect(gaps.length).toBeGreaterThanOrEqual(2);
    // The test clock moves 1 ms a step, so a timer may fire one step late.
    for (const g of gaps) expect(g - gap).toBeOneOf([0, 1]);
  });

  it('a leader renews every retry period, whatever the fraction', async () => {
    const clock = new ManualClock(1_000_000);
    const lease = new MemoryLease();
    const a = watched('a', lease.view('a'), clock);
    a.e.start();
    await run(clock, 12_000, 1);
    const renews = a.tries.filter((t) => t.kind !== 'get').map((t) => t.mono);
    const gaps = renews.slice(1).map((t, i) => t - (renews[i] as number));
    expect(gaps.length).toBeGreaterThanOrEqual(4);
    expect(new Set(gaps)).toEqual(new Set([2_000]));
  });
});

describe('LeaderElector: the renew deadline bounds a hung renew', () => {
  it.each([
    { reason: 'the renew PUT never answers', hang: 'update' as const, touched: false },
    {
      reason:
        'the renew on our last write is refused (someone else wrote the Lease) and the read after it never answers',
      hang: 'get' as const,
      touched: true,
    },
  ])('$reason: the leader stops leading at the renew deadline, never later', async ({ hang, touched }) => {
    const clock = new ManualClock(1_000_000);
    const lease = new MemoryLease();
    const h = hanging(lease.view('a'));
    const a = watched('a', h.store, clock);
    a.e.start();
    await run(clock, 5_000);
    expect(a.e.isLeader).toBe(true);
    // The tries so far all renewed; the last one's start is where the renew deadline counts from.
    const lastRenewStart = Math.max(...a.tries.map((t) => t.mono));
    if (touched) lease.touch();
    h.hang.add(hang);
    await run(clock, 30_000, 100);
    expect(a.at('stop')).toBeLessThanOrEqual(lastRenewStart + 10_000);
    expect(a.e.isLeader).toBe(false);
    expect(a.e.fence()).toBe(false);
    expect(a.events.filter((x) => x.what === 'stop')).toHaveLength(1);
    // The hung request was told to give up (its signal aborted) rather than left to the socket's timeout.
    expect(h.signals.length).toBeGreaterThan(0);
    expect(h.signals.every((s) => s.aborted)).toBe(true);
  });
});

describe("LeaderElector: a leader renews on its own last write (client-go's fast path)", () => {
  it('an idle leader sends one write per retry period and no read', async () => {
    const clock = new ManualClock(1_000_000);
    const a = watched('a', new MemoryLease().view('a'), clock);
    a.e.start();
    await run(clock, 20_000);
    expect(a.e.isLeader).toBe(true);
    // The first try reads (no Lease) and creates; every later one is a single update.
    expect(a.tries.slice(0, 2).map((t) => t.kind)).toEqual(['get', 'create']);
    const later = a.tries.slice(2);
    expect(later.length).toBeGreaterThanOrEqual(9);
    expect(later.every((t) => t.kind === 'update')).toBe(true);
    expect(new Set(later.map((t) => t.mono)).size).toBe(later.length);
  });

  it.each([
    {
      reason:
        'a third party edited the Lease (its record unchanged): the refused write leads to a read, and the ' +
        'leader renews on it',
      takenBy: null,
      leads: true,
    },
    {
      reason: 'another candidate took the Lease: the refused write leads to a read, and the leader stops at once',
      takenBy: 'b',
      leads: false,
    },
  ])('$reason', async ({ takenBy, leads }) => {
    const clock = new ManualClock(1_000_000);
    const lease = new MemoryLease();
    const a = watched('a', lease.view('a'), clock);
    a.e.start();
    await run(clock, 5_000);
    const before = a.tries.length;
    if (takenBy === null) lease.touch();
    else {
      const cur = lease.stored as StoredLease;
      lease.stored = {
        record: { ...(cur.record as LeaseRecord), holder: takenBy, transitions: 1 },
        resourceVersion: cur.resourceVersion + '0',
      };
    }
    const changedAt = clock.mono();
    await run(clock, 2_000);
    // The next try: the optimistic update (refused), then a read.
    expect(a.tries.slice(before, before + 2).map((t) => t.kind)).toEqual(['update', 'get']);
    expect(a.e.isLeader).toBe(leads);
    if (leads) {
      await run(clock, 6_000);
      expect(a.tries.slice(before + 2).every((t) => t.kind === 'update')).toBe(true);
      expect(lease.stored?.record?.holder).toBe('a');
    } else {
      expect(a.at('stop') - changedAt).toBeLessThanOrEqual(2_000);
      expect(a.events.at(-1)?.why).toMatch(/held by b/);
      expect(lease.stored?.record?.holder).toBe('b');
    }
  });
});

describe('LeaderElector: the fence', () => {
  // The leader renewed at monotonic 0 (its first try) and is then paused: `stall` moves time as a stopped
  // process sees it on waking, and no timer of its has run yet.
  it.each([
    { reason: 'paused 9.999 s after the renew began: still inside the renew deadline', pausedMs: 9_999, up: true },
    { reason: 'paused exactly to the renew deadline: down', pausedMs: 10_000, up: false },
    { reason: 'paused past the whole lease (SIGSTOP for 16 s): down', pausedMs: 16_000, up: false },
  ])('$reason', async ({ pausedMs, up }) => {
    const clock = new ManualClock(1_000_000);
    const a = watched('a', new MemoryLease().view('a'), clock);
    a.e.start();
    clock.advance(0);
    await settle();
    expect([...new Set(a.tries.map((t) => t.mono))]).toEqual([0]); // one try (a read and a create), at 0
    expect(a.e.fence()).toBe(true);
    const timers = clock.pending;
    clock.stall(pausedMs);
    expect(a.e.fence()).toBe(up);
    expect(a.e.fence()).toBe(up); // asking again changes nothing
    expect(clock.pending).toBe(up ? timers : 0); // no timer ran; a lost leader cancelled its own
    expect(a.events.filter((x) => x.what === 'stop').map((x) => x.mono)).toEqual(up ? [] : [pausedMs]);
    expect(a.e.isLeader).toBe(up);
  });

  it('a follower never passes the fence', async () => {
    const clock = new ManualClock(1_000_000);
    const { a, b } = await leaderAndFollower(clock);
    await run(clock, 10_000);
    expect([a.e.fence(), b.e.fence()]).toEqual([true, false]);
    expect(b.events).toEqual([]);
  });
});

describe('LeaderElector: a wall-clock step changes no lease decision', () => {
  const HOUR = 3_600_000;
  it.each([
    {
      reason: 'stepped back an hour while the leader is cut off: it still stops at the renew deadline',
      jumpMs: -HOUR,
      cutForMs: 30_000,
      stops: true,
    },
    {
      reason: 'stepped forward an hour while the leader is cut off: it stops at the renew deadline, not earlier',
      jumpMs: HOUR,
      cutForMs: 30_000,
      stops: true,
    },
    {
      reason: 'stepped forward an hour and one renew fails: it keeps leading (4 s since the last renew, not 1 h)',
      jumpMs: HOUR,
      cutForMs: 2_000,
      stops: false,
    },
  ])('leader: $reason', async ({ jumpMs, cutForMs, stops }) => {
    const clock = new ManualClock(1_000_000);
    const lease = new MemoryLease();
    const a = watched('a', lease.view('a'), clock);
    a.e.start();
    await run(clock, 3_000);
    const lastRenewStart = Math.max(...a.tries.map((t) => t.mono));
    lease.failFor.add('a');
    clock.jumpWall(jumpMs);
    await run(clock, cutForMs);
    lease.failFor.delete('a');
    await run(clock, 30_000);
    if (stops) {
      expect(a.at('stop')).toBe(lastRenewStart + 10_000);
    } else {
      expect(a.events.map((x) => x.what)).toEqual(['start']);
      expect(a.e.isLeader).toBe(true);
    }
  });

  it.each([
    { reason: 'stepped forward an hour: the follower still waits the lease duration', jumpMs: HOUR },
    {
      reason: 'stepped back an hour: the follower takes over after the lease duration, not an hour later',
      jumpMs: -HOUR,
    },
  ])('follower: $reason', async ({ jumpMs }) => {
    const clock = new ManualClock(1_000_000);
    const { lease, a, b } = await leaderAndFollower(clock);
    await run(clock, 4000);
    lease.failFor.add('a'); // the leader is cut off: its last renewal stays in the Lease
    const last = JSON.stringify(lease.stored?.record);
    await run(clock, 4_500); // b reads it (a try every 2–4.4 s) before the step
    const steppedAt = clock.mono();
    clock.jumpWall(jumpMs);
    await run(clock, 30_000);
    // When b first saw the leader's last record, on b's monotonic clock: the lease duration counts from there.
    const seen = b.tries.find((t) => t.kind === 'get' && t.record === last)?.mono ?? NaN;
    expect(seen).toBeLessThan(steppedAt);
    const takeover = b.at('start');
    expect(takeover - seen).toBeGreaterThanOrEqual(15_000);
    expect(takeover - seen).toBeLessThanOrEqual(15_000 + 4_400);
    expect(takeover).toBeGreaterThan(a.at('stop'));
    expect(lease.stored?.record?.holder).toBe('b');
  });
});

describe('the fenced client: the check is made right before the transport', () => {
  /** Every request that reached the server, as "METHOD path". */
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  /** A client whose signing step (awaited before each send) runs `whileSigning` first. */
  const client = (whileSigning: () => void = () => undefined): KubeClient =>
    new KubeClient({
      getCurrentCluster: () => ({ server: url }),
      getCurrentContext: () => 'test',
      applyToHTTPSOptions: async () => {
        whileSigning();
        await Promise.resolve();
      },
    });

  it.each([
    { reason: 'PATCH (annotations, cordons, status) with the fence down: refused', method: 'PATCH', sent: false },
    { reason: 'POST (placeholder Pods, Events) with the fence down: refused', method: 'POST', sent: false },
    { reason: 'PUT with the fence down: refused', method: 'PUT', sent: false },
    { reason: 'DELETE (placeholders, NodeClaims) with the fence down: refused', method: 'DELETE', sent: false },
    { reason: 'GET with the fence down: a read, sent (followers keep their caches warm)', method: 'GET', sent: true },
  ])('$reason', async ({ method, sent }) => {
    seen.length = 0;
    const c = client();
    const fenced = c.fenced(() => false);
    const call = fenced.request(method, '/api/v1/nodes/n', method === 'GET' ? {} : { body: {} });
    if (sent) await expect(call).resolves.toEqual({});
    else await expect(call).rejects.toBeInstanceOf(NotLeader);
    expect(seen).toEqual(sent ? [`${method} /api/v1/nodes/n`] : []);
    expect(fenced.fenceUp()).toBe(false);
    c.close();
  });

  it.each([
    { reason: 'the fence is up throughout: the write is sent', downWhileSigning: false, sent: true },
    {
      reason: 'the fence goes down while the request is signed (an await before the send): refused',
      downWhileSigning: true,
      sent: false,
    },
  ])('$reason', async ({ downWhileSigning, sent }) => {
    seen.length = 0;
    let up = true;
    const c = client(() => {
      if (downWhileSigning) up = false;
    });
    const call = c.fenced(() => up).request('PATCH', '/api/v1/nodes/n', { body: {} });
    if (sent) await expect(call).resolves.toEqual({});
    else await expect(call).rejects.toBeInstanceOf(NotLeader);
    expect(seen).toHaveLength(sent ? 1 : 0);
    c.close();
  });

  it(
    'a leader paused past its lease: on waking, before any timer of its runs, the fence is down, the loss is ' +
      'reported once, and the write it attempts never reaches the transport',
    async () => {
      seen.length = 0;
      const clock = new ManualClock(1_000_000);
      const a = watched('a', new MemoryLease().view('a'), clock);
      a.e.start();
      await run(clock, 1_000);
      const c = client();
      const fenced = c.fenced(() => a.e.fence());
      await expect(fenced.request('PATCH', '/api/v1/nodes/before', { body: {} })).resolves.toEqual({});
      clock.stall(16_000); // SIGSTOP for longer than the Lease; SIGCONT
      await expect(fenced.request('PATCH', '/api/v1/nodes/after', { body: {} })).rejects.toBeInstanceOf(NotLeader);
      await expect(fenced.request('DELETE', '/api/v1/nodes/after')).rejects.toBeInstanceOf(NotLeader);
      expect(seen).toEqual(['PATCH /api/v1/nodes/before']);
      expect(a.events.map((x) => x.what)).toEqual(['start', 'stop']);
      expect(a.at('stop')).toBe(1_000 + 16_000); // at the write, on waking: no timer had run
      clock.advance(0); // the overdue timers run now: nothing more happens
      await settle();
      expect(a.events).toHaveLength(2);
      c.close();
    },
  );
});

describe('apiLeaseStore', () => {
  it.each([
    { reason: "the read carries the try's signal", call: (s: LeaseStore, sig: AbortSignal) => s.get(sig) },
    { reason: 'the create carries it', call: (s: LeaseStore, sig: AbortSignal) => s.create(held('me'), sig) },
    { reason: 'the renew carries it', call: (s: LeaseStore, sig: AbortSignal) => s.update(held('me'), '7', sig) },
  ])('$reason, so that the request is aborted at the renew deadline', async ({ call }) => {
    const seen: (AbortSignal | undefined)[] = [];
    const api: KubeApi = {
      request: <T>(_m: string, _p: string, opts?: RequestOptions) => {
        seen.push(opts?.signal);
        return Promise.resolve({ metadata: { resourceVersion: '7' } } as T);
      },
      watch: () => Promise.resolve(),
      fenceUp: () => true,
    };
    const signal = new AbortController().signal;
    await call(apiLeaseStore(api, 'ns'), signal);
    expect(seen).toEqual([signal]);
  });
});
