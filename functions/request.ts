// Building a RunFunctionRequest the way Crossplane does after its first call, for `noderotation render`,
// the tests and the benchmark: the plan as the observed XR, the NodePools as required resources.
import { create, type JsonObject } from '@bufbuild/protobuf';
import { RunFunctionRequestSchema, type RunFunctionRequest } from './generated/fn/v1/run_function_pb.js';
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
  return create(RunFunctionRequestSchema, {
    meta: { tag },
    observed: { composite: { resource: composite } },
    desired: {},
    input,
    requiredResources:
      nodePools === null ? {} : { [NODEPOOLS]: { items: nodePools.map((resource) => ({ resource })) } },
  });
}
