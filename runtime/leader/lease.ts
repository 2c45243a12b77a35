// Leader election on a coordination.k8s.io/v1 Lease, decided by a pure step function; the shell only reads
// and writes the Lease. The rules are client-go's (the reference controller uses them through
// controller-runtime, and both controllers contend for the same Lease during a migration):
//  - a Lease held by someone else is respected until it has gone unchanged for leaseDuration, measured on
//    OUR monotonic clock from the moment we last saw it change (never from its renewTime: clocks across hosts
//    differ, and a wall clock can jump); the times written into the Lease are wall time, as client-go's are;
//  - an empty holderIdentity (a released Lease) may be taken at once;
//  - the holder renews every retry period; if it cannot renew for renewDeadline it must stop acting;
//  - every write is conditioned on the resourceVersion read, so of two candidates exactly one wins.

export interface LeaseRecord {
  holder: string;
  durationSeconds: number;
  /** Epoch ms, or null when unset. */
  acquireTime: number | null;
  renewTime: number | null;
  transitions: number;
}

export interface LeaseObservation {
  /** The record last read, and when (our monotonic clock) we first saw it in that form. */
  record: LeaseRecord | null;
  seenAt: number;
}

/** One moment on both clocks: `mono` decides expiry, `wall` is what a written record says. */
export interface Instant {
  mono: number;
  wall: number;
}

export type LeaseStep =
  { write: 'create' | 'update'; record: LeaseRecord; why: string } | { write: null; leader: false; why: string };

export interface LeaseConfig {
  identity: string;
  leaseDurationSeconds: number;
}

const sameRecord = (a: LeaseRecord | null, b: LeaseRecord | null): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Updates what we know of the Lease: a record that changed restarts its expiry clock (`mono`: monotonic ms). */
export function observe(prev: LeaseObservation | null, current: LeaseRecord | null, mono: number): LeaseObservation {
  if (prev && sameRecord(prev.record, current)) return prev;
  return { record: current, seenAt: mono };
}

/**
 * One try to acquire or renew. `exists` says whether the Lease object exists at all (a missing Lease is
 * created; a Lease with an empty spec is updated).
 */
export function leaseStep(obs: LeaseObservation, exists: boolean, cfg: LeaseConfig, at: Instant): LeaseStep {
  const cur = obs.record;
  const now = at.wall;
  const fresh = (transitions: number): LeaseRecord => ({
    holder: cfg.identity,
    durationSeconds: cfg.leaseDurationSeconds,
    acquireTime: now,
    renewTime: now,
    transitions,
  });
  if (!exists || !cur) return { write: exists ? 'update' : 'create', record: fresh(0), why: 'no lease yet' };
  if (cur.holder === cfg.identity) {
    return {
      write: 'update',
      record: {
        ...cur,
        durationSeconds: cfg.leaseDurationSeconds,
        acquireTime: cur.acquireTime ?? now,
        renewTime: now,
      },
      why: 'renewing our lease',
    };
  }
  if (cur.holder !== '') {
    const unchanged = at.mono - obs.seenAt;
    if (unchanged < cur.durationSeconds * 1000) {
      return { write: null, leader: false, why: `held by ${cur.holder} (unchanged for ${unchanged} ms)` };
    }
    return { write: 'update', record: fresh(cur.transitions + 1), why: `taking over from ${cur.holder} (expired)` };
  }
  return { write: 'update', record: fresh(cur.transitions + 1), why: 'the lease was released' };
}

/** The record a holder writes on a clean shutdown so that another candidate may take over at once. */
export function released(cur: LeaseRecord, now: number): LeaseRecord {
  return { holder: '', durationSeconds: 1, acquireTime: now, renewTime: now, transitions: cur.transitions };
}
