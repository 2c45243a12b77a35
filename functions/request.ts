// Building a RunFunctionRequest the way Crossplane does after its first call, for `noderotation render`,
// the tests and the benchmark: the plan as the observed XR, the NodePools as required resources.
import { RunFunctionRequest } from '@crossplane-org/function-sdk-typescript';
import type { JsonObject } from './json.js';
import { NODEPOOLS } from './run.js';

export interface PlanRequest {
  /** The MaintenancePlan (or an XR of the XRD) as Crossplane observes it. */
  composite: JsonObject;
  /** null: the first call of the requirements loop, before Crossplane fetched anything. */
  nodePools: readonly JsonObject[] | null;
  input?: JsonObject;
  tag?: string;
}

export function planRequest({ composite, nodePools, input, tag = '' }: PlanRequest): RunFunctionRequest {
  return RunFunctionRequest.fromPartial({
    meta: { tag },
    observed: { composite: { resource: composite } },
    desired: {},
    input,
    requiredResources:
      nodePools === null ? {} : { [NODEPOOLS]: { items: nodePools.map((resource) => ({ resource })) } },
  });
}
