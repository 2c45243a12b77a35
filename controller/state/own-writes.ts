// Read-your-writes for the passes: a pass's writes are answered with the objects' new resourceVersions before its
// watch events arrive, and a pass decided on a cache that does not show them yet would act on the state it has
// just changed (create a placeholder it created a moment ago, cordon again, delete a claim it has deleted). So
// each key (a NodePool) remembers, per cache, the latest version its last pass's writes were answered with, and
// its next pass waits until each cache has reached it (KEP-5504's ordering of versions), for a bounded time:
// after that (a watch that lags or broke) it proceeds as before, every write still conditioned on what it read.
// client-go's controllers keep "expectations" of creates and deletes for the same reason.
import { compareResourceVersion } from '../../runtime/kube/resource-version.js';
import type { Clock } from '../../runtime/queue/clock.js';

/** A cache that can tell whether it shows a version of its resource yet (runtime/kube/reflector.ts). */
export interface Follows {
  caughtUpTo(resourceVersion: string): boolean;
}

interface Pending {
  /** Monotonic ms of the last write. */
  at: number;
  versions: Map<Follows, string>;
}

export class OwnWrites {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly clock: Clock,
    /** The longest a pass waits for its caches after the last write of the one before. */
    private readonly maxWaitMs: number,
  ) {}

  /** A write of `key`'s pass was answered with `resourceVersion`, which `cache` will show once its watch has it. */
  wrote(key: string, cache: Follows, resourceVersion: string): void {
    let p = this.pending.get(key);
    if (!p) this.pending.set(key, (p = { at: 0, versions: new Map() }));
    p.at = this.clock.mono();
    const before = p.versions.get(cache);
    if (before === undefined || (compareResourceVersion(resourceVersion, before) ?? 1) > 0)
      p.versions.set(cache, resourceVersion);
  }

  /**
   * null when `key`'s caches show every write of its last pass (or it has waited long enough); otherwise the
   * wall-clock instant at which to stop waiting.
   */
  waitUntil(key: string): number | null {
    const p = this.pending.get(key);
    if (!p) return null;
    for (const [cache, rv] of p.versions) if (cache.caughtUpTo(rv)) p.versions.delete(cache);
    const left = p.at + this.maxWaitMs - this.clock.mono();
    if (p.versions.size === 0 || left <= 0) {
      this.pending.delete(key);
      return null;
    }
    return this.clock.now() + left;
  }

  forget(key: string): void {
    this.pending.delete(key);
  }
}
