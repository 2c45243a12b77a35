// The deterministic simulation: its scheduler and PRNG, its reproducibility, and the CI range of seeds without
// faults (sim-faults.test.ts runs the faulted range).
import { describe, expect, it } from 'vitest';
import { fencedApi, NotLeader } from '../../runtime/kube/client.js';
import { ApiServer } from './apiserver.js';
import { Rng, Scheduler, xoshiro128ss } from './scheduler.js';
import { expectRunsHold } from './hold.js';
import { ciPart, partTitle } from './seeds.js';
import { FAULTS, runSeed } from './sim.js';
import { NO_FAULTS, SimTransport } from './transport.js';

describe('the scheduler', () => {
  it('xoshiro128** gives the reference outputs for the state 1, 2, 3, 4', () => {
    const next = xoshiro128ss(1, 2, 3, 4);
    expect(Array.from({ length: 6 }, next)).toEqual([11520, 0, 5927040, 70819200, 2031721883, 1637235492]);
  });

  it('moves time only when nothing is runnable, to the earliest task or timer due', () => {
    const s = new Scheduler(Rng.of(1), 0);
    const seen: string[] = [];
    s.clock('p').after(100, () => seen.push(`timer@${s.now}`));
    s.add('p', 'io', 0, () => seen.push(`io@${s.now}`));
    s.add('p', 'later', 50, () => seen.push(`later@${s.now}`));
    while (s.step()) {
      /* run all */
    }
    expect(seen).toEqual(['io@0', 'later@50', 'timer@100']);
  });

  it('keeps timers in their order (as setTimeout does) while I/O tasks race', () => {
    const orders = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      const s = new Scheduler(Rng.of(seed), 0);
      const seen: string[] = [];
      for (const t of ['t1', 't2', 't3']) s.clock('p').after(0, () => seen.push(t));
      for (const t of ['a', 'b']) s.add('p', t, 0, () => seen.push(t));
      while (s.step()) {
        /* run all */
      }
      expect(seen.filter((x) => x.startsWith('t'))).toEqual(['t1', 't2', 't3']);
      orders.add(seen.join(','));
    }
    expect(orders.size).toBeGreaterThan(1);
  });

  it('runs none of a paused process’s tasks until it resumes, while time and others go on', () => {
    const s = new Scheduler(Rng.of(1), 0);
    const seen: string[] = [];
    const clock = s.clock('p');
    clock.after(10, () => seen.push(`p timer@${s.now} mono ${clock.mono()}`));
    s.add('p', 'io', 5, () => seen.push(`p io@${s.now}`));
    s.add('p (wire)', 'arrival', 5, () => seen.push(`p arrival@${s.now}`));
    s.add('q', 'io', 100, () => seen.push(`q io@${s.now}`));
    s.pause('p', 1_000);
    while (s.step()) {
      /* run all */
    }
    expect(seen.slice(0, 2)).toEqual(['p arrival@5', 'q io@100']);
    expect(seen.slice(2).sort()).toEqual(['p io@1000', 'p timer@1000 mono 1000']);
  });

  it('jumps the wall clock of one process, never its monotonic clock nor its timers', () => {
    const s = new Scheduler(Rng.of(1), 0);
    const p = s.clock('p');
    const seen: number[] = [];
    p.after(50, () => seen.push(s.now));
    s.jumpWall('p', -120_000);
    expect([p.now(), p.mono(), s.clock('q').now()]).toEqual([-120_000, 0, 0]);
    while (s.step()) {
      /* run all */
    }
    expect(seen).toEqual([50]);
    s.resetWall('p');
    expect(p.now()).toBe(50);
  });

  it('runs the fence of fencedApi (KubeClient’s) on the simulated wire: a refused write sends nothing', async () => {
    const s = new Scheduler(Rng.of(1), 0);
    const server = new ApiServer({ now: () => s.now, random: Rng.of(2).next });
    const t = new SimTransport(server, s, Rng.of(3), 'p', () => NO_FAULTS);
    let up = false;
    const api = fencedApi(t, () => up);
    const body = { metadata: { name: 'n' } };
    await expect(api.request('POST', '/api/v1/nodes', { body })).rejects.toBeInstanceOf(NotLeader);
    up = true;
    const created = api.request('POST', '/api/v1/nodes', { body });
    while (s.step()) {
      /* run all */
    }
    await created;
    expect(server.writes.map((w) => `${w.actor} ${w.verb} ${w.name}`)).toEqual(['p create n']);
  });

  it('a stalled watch stays open and silent for 12–60 s after an event, then delivers the rest in order', async () => {
    const s = new Scheduler(Rng.of(1), 0);
    const server = new ApiServer({ now: () => s.now, random: Rng.of(2).next });
    const t = new SimTransport(server, s, Rng.of(3), 'p', () => ({ ...NO_FAULTS, stalls: 1 }));
    const seen: { name: string; at: number }[] = [];
    const stop = new AbortController();
    const watching = t.watch(
      '/api/v1/nodes',
      {},
      (_type, o) => {
        seen.push({ name: (o.metadata as { name: string }).name, at: s.now });
      },
      stop.signal,
    );
    for (const name of ['a', 'b', 'c'])
      server.handle('admin', { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name } } });
    while (seen.length < 3 && s.step()) {
      /* run until all three arrive */
    }
    stop.abort();
    await watching;
    expect(seen.map((e) => e.name)).toEqual(['a', 'b', 'c']);
    for (const [i, gap] of [seen[1]!.at - seen[0]!.at, seen[2]!.at - seen[1]!.at].entries()) {
      expect(gap, `gap ${i}`).toBeGreaterThanOrEqual(12_000);
      expect(gap, `gap ${i}`).toBeLessThanOrEqual(60_020);
    }
  });

  it('drops the tasks and timers of a killed process', () => {
    const s = new Scheduler(Rng.of(1), 0);
    const seen: string[] = [];
    s.add('dead', 'io', 0, () => seen.push('dead io'));
    s.clock('dead').after(10, () => seen.push('dead timer'));
    s.add('alive', 'io', 0, () => seen.push('alive io'));
    s.kill('dead');
    while (s.step()) {
      /* run all */
    }
    expect(seen).toEqual(['alive io']);
  });
});

describe('a seed reproduces its run exactly', () => {
  it('the same seed with every fault gives the same steps, writes and trace twice', async () => {
    const faults = [...FAULTS];
    const a = await runSeed({ seed: 4242, faults });
    const b = await runSeed({ seed: 4242, faults });
    expect(b.steps).toBe(a.steps);
    expect(b.writes).toBe(a.writes);
    expect(b.trace).toEqual(a.trace);
    expect(a.steps).toBeGreaterThan(100);
  });
});

describe('the controller under simulation, without faults', () => {
  it(partTitle(0), { timeout: 30 * 60_000 }, async () => {
    await expectRunsHold(ciPart(0));
  });
});
