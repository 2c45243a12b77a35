// The Lease object through the API: reads map to a LeaseRecord, writes are conditioned on resourceVersion
// (PUT with metadata.resourceVersion: the apiserver answers 409 when someone else wrote in between); a write
// answers with the resourceVersion it produced, on which the leader's next renew is conditioned. Each
// request carries the elector's signal, which aborts it at the renew deadline. This store uses the unfenced
// client: renewing the Lease is how the fence is kept up.
import { isNotFound, type KubeApi } from '../kube/client.js';
import { microTime } from '../kube/micro-time.js';
import type { LeaseStore, StoredLease } from './elector.js';
import type { LeaseRecord } from './lease.js';

/** The reference controller's Lease name, so that the two never act at the same time during a migration. */
export const LEASE_NAME = 'node-rotation-controller.noderotation.io';

interface LeaseObject {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

const parse = (t: string | undefined): number | null => {
  if (!t) return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
};

export function toRecord(o: LeaseObject): LeaseRecord | null {
  if (!o.spec) return null;
  return {
    holder: o.spec.holderIdentity ?? '',
    durationSeconds: o.spec.leaseDurationSeconds ?? 15,
    acquireTime: parse(o.spec.acquireTime),
    renewTime: parse(o.spec.renewTime),
    transitions: o.spec.leaseTransitions ?? 0,
  };
}

function toSpec(r: LeaseRecord): NonNullable<LeaseObject['spec']> {
  return {
    holderIdentity: r.holder,
    leaseDurationSeconds: r.durationSeconds,
    ...(r.acquireTime === null ? {} : { acquireTime: microTime(r.acquireTime) }),
    ...(r.renewTime === null ? {} : { renewTime: microTime(r.renewTime) }),
    leaseTransitions: r.transitions,
  };
}

export function apiLeaseStore(client: KubeApi, namespace: string, name = LEASE_NAME): LeaseStore {
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
  return {
    async get(signal): Promise<StoredLease | null> {
      try {
        const o = await client.request<LeaseObject>('GET', `${collection}/${name}`, { signal });
        return { record: toRecord(o), resourceVersion: o.metadata.resourceVersion ?? '' };
      } catch (e) {
        if (isNotFound(e)) return null;
        throw e;
      }
    },
    async create(record, signal) {
      const o = await client.request<LeaseObject>('POST', collection, {
        signal,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: toSpec(record),
        },
      });
      return o.metadata.resourceVersion ?? '';
    },
    async update(record, resourceVersion, signal) {
      const o = await client.request<LeaseObject>('PUT', `${collection}/${name}`, {
        signal,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace, resourceVersion },
          spec: toSpec(record),
        },
      });
      return o.metadata.resourceVersion ?? '';
    },
  };
}
