import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../runtime/queue/clock.js';
import { compareResourceVersion } from '../../runtime/kube/resource-version.js';
import { OwnWrites } from './own-writes.js';

/** A cache whose version the test moves, as its watch would. */
function cache(version: string) {
  const c = {
    version,
    caughtUpTo: (rv: string) => (compareResourceVersion(c.version, rv) ?? 1) >= 0,
  };
  return c;
}

describe('OwnWrites', () => {
  it('a key waits until every cache it wrote to shows its latest write, then not again', () => {
    const clock = new ManualClock(1_000_000);
    const w = new OwnWrites(clock, 10_000);
    const claims = cache('100');
    const nodes = cache('100');
    w.wrote('pool', claims, '101');
    w.wrote('pool', nodes, '102');
    w.wrote('pool', claims, '103');
    expect(w.waitUntil('pool')).toBe(clock.now() + 10_000);
    expect(w.waitUntil('other')).toBeNull();
    claims.version = '102'; // not yet the latest write to it
    nodes.version = '102';
    expect(w.waitUntil('pool')).toBe(clock.now() + 10_000);
    claims.version = '103';
    expect(w.waitUntil('pool')).toBeNull();
    claims.version = '100'; // forgotten once seen: a relist of an older server does not hold the key again
    expect(w.waitUntil('pool')).toBeNull();
  });

  it('waits with no bound, looking again every recheck period, whatever the wall clock does', () => {
    const clock = new ManualClock(1_000_000);
    const w = new OwnWrites(clock, 10_000);
    const c = cache('1');
    w.wrote('pool', c, '5');
    clock.advance(3_600_000);
    expect(w.waitUntil('pool')).toBe(clock.now() + 10_000);
    clock.jumpWall(-3_600_000);
    expect(w.waitUntil('pool')).toBe(clock.now() + 10_000);
    c.version = '5';
    expect(w.waitUntil('pool')).toBeNull();
  });

  it('a version it cannot compare does not hold the key; forget drops what a gone pool waited for', () => {
    const clock = new ManualClock(0);
    const w = new OwnWrites(clock, 10_000);
    w.wrote('a', cache('opaque'), 'opaque-2');
    expect(w.waitUntil('a')).toBeNull();
    w.wrote('b', cache('1'), '2');
    w.forget('b');
    expect(w.waitUntil('b')).toBeNull();
  });
});
