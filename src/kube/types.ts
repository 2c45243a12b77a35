// The parts of core/v1 Node and Pod the engine reads and writes (what the controller lists and watches).
import type { ObjectMeta, Taint } from '../karpenter/types.js';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid?: string;
  controller?: boolean;
}

export interface Node {
  apiVersion?: 'v1';
  kind?: 'Node';
  metadata: ObjectMeta & { ownerReferences?: OwnerReference[] };
  spec: { providerID?: string; unschedulable?: boolean; taints?: Taint[] };
  status?: {
    conditions?: { type: string; status: string }[];
    allocatable?: Record<string, string | number>;
  };
}

export interface NodeSelectorTerm {
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface Container {
  name: string;
  image?: string;
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  securityContext?: Record<string, unknown>;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
}

export interface Pod {
  apiVersion?: 'v1';
  kind?: 'Pod';
  metadata: ObjectMeta & { namespace?: string; ownerReferences?: OwnerReference[] };
  spec: {
    nodeName?: string;
    containers: Container[];
    initContainers?: Container[];
    overhead?: Record<string, string | number>;
    nodeSelector?: Record<string, string>;
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
        preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; preference: NodeSelectorTerm }[];
      };
    };
    tolerations?: Toleration[];
    priorityClassName?: string;
    preemptionPolicy?: 'Never' | 'PreemptLowerPriority';
    terminationGracePeriodSeconds?: number;
    automountServiceAccountToken?: boolean;
    restartPolicy?: string;
    securityContext?: Record<string, unknown>;
  };
  status?: {
    phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
    conditions?: { type: string; status: string; reason?: string }[];
    /** RFC 3339: when the kubelet accepted the Pod (a duration-valued do-not-disrupt counts from it). */
    startTime?: string;
  };
}

export const isReady = (obj: { status?: { conditions?: { type: string; status: string }[] } }): boolean =>
  obj.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
