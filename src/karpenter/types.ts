// The parts of Karpenter's karpenter.sh/v1 API this project reads (see shared/reference/karpenter-v1.14.1).

export interface ObjectMeta {
  name: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  resourceVersion?: string;
  generation?: number;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';
  values?: string[];
  minValues?: number;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface NodePool {
  apiVersion: 'karpenter.sh/v1';
  kind: 'NodePool';
  metadata: ObjectMeta;
  spec: {
    template: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec: {
        requirements?: NodeSelectorRequirement[];
        taints?: Taint[];
        startupTaints?: Taint[];
        expireAfter?: string;
        terminationGracePeriod?: string;
        nodeClassRef?: { group: string; kind: string; name: string };
      };
    };
    limits?: Record<string, string | number>;
    disruption?: unknown;
    weight?: number;
  };
  status?: {
    nodes?: number;
    resources?: Record<string, string | number>;
    conditions?: unknown[];
  };
}

export interface NodeClaim {
  apiVersion: 'karpenter.sh/v1';
  kind: 'NodeClaim';
  metadata: ObjectMeta;
  spec: {
    expireAfter?: string;
    terminationGracePeriod?: string;
    requirements?: NodeSelectorRequirement[];
    taints?: Taint[];
    nodeClassRef?: { group: string; kind: string; name: string };
  };
  status?: {
    nodeName?: string;
    providerID?: string;
    capacity?: Record<string, string | number>;
    allocatable?: Record<string, string | number>;
    conditions?: { type: string; status: string; reason?: string; lastTransitionTime?: string }[];
  };
}

/** CRD default of NodePool spec.template.spec.expireAfter (karpenter.sh_nodepools.yaml). */
export const DEFAULT_EXPIRE_AFTER = '720h';

export const NODEPOOL_LABEL = 'karpenter.sh/nodepool';

/**
 * The NoExecute taint a Karpenter node carries from its creation until Karpenter registers its NodeClaim
 * (`v1.UnregisteredNoExecuteTaint`, pkg/apis/v1/taints.go), which Karpenter's scheduling treats as ephemeral.
 */
export const UNREGISTERED_TAINT = 'karpenter.sh/unregistered';

export function nodePoolOf(claim: NodeClaim): string | undefined {
  return claim.metadata.labels?.[NODEPOOL_LABEL];
}
