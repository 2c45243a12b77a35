// Read-your-writes for the passes: a pass's writes are answered with the objects' new resourceVersions before its
// watch events arrive, and a pass decided on a cache that does not show them yet would act on the state it has
// just changed (create a placeholder it created a moment ago, cordon again, delete a claim it has deleted). So
// each key (a NodePool) remembers, per cache, the latest version its last pass's writes were answered with, and
// its next pass waits until each cache has reached it (KEP-5504's ordering of versions). Without a time bound:
// a pass that went ahead on a lagging watch could judge one object by a stale copy of another — a claim still
// "failed" in the cache after our own retry made it pending — and the precondition of the write it then makes
// (releasing the NodePool's anchor) is on the NodePool, which is current, so nothing stops the second rotation
// that follows (seed 200268 of the simulation, with a 58 s watch stall). Waiting is safe (a pool that does
// nothing is left to Karpenter's own expiry) and live: a stalled or broken watch ends within its timeout and
// the reflector resumes or relists. client-go's controllers keep "expectations" of creates and deletes for the
// same reason.
import { compareResourceVersion } from '../../runtime/kube/resource-version.js';
import type { Clock } from '../../runtime/queue/clock.js';

/** A cache that can tell whether it shows a version of its resource yet (runtime/kube/reflector.ts). */
export interface Follows {
  caughtUpTo(resourceVersion: string): boolean;
}

export class OwnWrites {
  /** Per key, the version each cache it wrote to must reach. */
  private readonly pending = new Map<string, Map<Follows, string>>();

  constructor(
    private readonly clock: Clock,
    /** How often a waiting key looks again (its caches' watch events queue it at once besides). */
    private readonly recheckMs: number,
  ) {}

  /** A write of `key`'s pass was answered with `resourceVersion`, which `cache` will show once its watch has it. */
  wrote(key: string, cache: Follows, resourceVersion: string): void {
    let versions = this.pending.get(key);
    if (!versions) this.pending.set(key, (versions = new Map<Follows, string>()));
    const before = versions.get(cache);
    if (before === undefined || (compareResourceVersion(resourceVersion, before) ?? 1) > 0)
      versions.set(cache, resourceVersion);
  }

  /**
   * null when `key`'s caches show every write of its last pass; otherwise the wall-clock instant at which to
   * look again.
   */
  waitUntil(key: string): number | null {
    const versions = this.pending.get(key);
    if (!versions) return null;
    for (const [cache, rv] of versions) if (cache.caughtUpTo(rv)) versions.delete(cache);
    if (versions.size === 0) {
      this.pending.delete(key);
      return null;
    }
    return this.clock.now() + this.recheckMs;
  }

  forget(key: string): void {
    this.pending.delete(key);
  }
}
