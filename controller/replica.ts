// One replica of the controller: the Controller and, with leader election, the elector on the reference's Lease
// whose fence every write of the Controller passes. `noderotation controller` (main.ts) runs one over sockets;
// the simulation (test/sim) runs one or two over its scheduler, so both run the same wiring and the same fence.
import { Controller, type ControllerOptions } from './controller.js';
import { fencedApi, type KubeApi, type Wire } from '../runtime/kube/client.js';
import { LeaderElector } from '../runtime/leader/elector.js';
import { apiLeaseStore } from '../runtime/leader/lease-store.js';

/** client-go's defaults, as controller-runtime's and the reference controller's. */
export const LEASE_DURATION_SECONDS = 15;
export const RENEW_DEADLINE_MS = 10_000;
export const RETRY_PERIOD_MS = 2_000;

export interface ReplicaOptions extends Omit<ControllerOptions, 'client'> {
  /** The unfenced client: the Lease store writes through it (renewing is what keeps the fence up). */
  client: KubeApi & Wire;
  leaderElect: boolean;
  /** Leadership was lost: the process must exit so that only the leader writes. */
  onLostLeadership: (why: string) => void;
}

export interface Replica {
  readonly controller: Controller;
  /** Syncs the caches and, once leading (at once without leader election), starts working. */
  start(): void;
  /** The passes in flight finish their current write, the watches end; a leader that did not lose releases. */
  stop(lost: boolean): Promise<void>;
}

export function replica(o: ReplicaOptions): Replica {
  const { client, leaderElect, onLostLeadership, ...rest } = o;
  const { log, metrics, clock, identity, namespace } = rest;
  // With leader election, every write of the controller passes the elector's fence (the Lease store alone
  // writes unfenced: renewing is what keeps the fence up); without it the fence is always up.
  let elector: LeaderElector | null = null;
  const controller = new Controller({
    ...rest,
    client: leaderElect ? fencedApi(client, () => elector?.fence() ?? false) : client,
  });
  return {
    controller,
    start() {
      const syncing = controller.sync();
      /** `since`: the resourceVersion leadership began at (none without election, or with a Lease we created). */
      const startWork = (since?: string): void => {
        metrics.leader.set(1);
        void syncing
          .then(() => controller.startWorking(since))
          .catch((e: unknown) => log.error('could not start working', { error: String(e) }));
      };
      if (!leaderElect) {
        startWork();
        return;
      }
      elector = new LeaderElector({
        identity,
        store: apiLeaseStore(client, namespace),
        clock,
        leaseDurationSeconds: LEASE_DURATION_SECONDS,
        renewDeadlineMs: RENEW_DEADLINE_MS,
        retryPeriodMs: RETRY_PERIOD_MS,
        onStartedLeading: (since) => {
          log.info('became the leader', { identity, since });
          startWork(since ?? undefined);
        },
        onStoppedLeading: (why) => {
          metrics.leader.set(0);
          log.error('lost leadership; exiting so that only the leader writes', { why });
          onLostLeadership(why);
        },
        log: (m, f) => log.info(m, f),
      });
      elector.start();
    },
    async stop(lost) {
      await controller.stop();
      if (elector && !lost) await elector.stop();
    },
  };
}
