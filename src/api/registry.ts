// The embedded source schemas (src/generated/schemas.ts), looked up by $id and dereferenced once.
import { schemas } from '../generated/schemas.js';
import { dereference, type JsonSchema } from '../schema-tools/deref.js';

export const SCHEMA_BASE = 'https://noderotation.io/schemas/';

export const schemaIds = {
  rotationPolicy: `${SCHEMA_BASE}rotationpolicy.schema.json`,
  maintenancePlan: `${SCHEMA_BASE}maintenanceplan.schema.json`,
  policySettings: `${SCHEMA_BASE}definitions/policy-settings.schema.json`,
  scenario: `${SCHEMA_BASE}scenario.schema.json`,
  nodePool: `${SCHEMA_BASE}karpenter/nodepool.schema.json`,
  nodeClaim: `${SCHEMA_BASE}karpenter/nodeclaim.schema.json`,
} as const;

const byId = new Map<string, JsonSchema>(Object.entries(schemas) as [string, JsonSchema][]);
const cache = new Map<string, JsonSchema>();

export function allSchemas(): ReadonlyMap<string, JsonSchema> {
  return byId;
}

/** The schema with this $id (optionally a `#/definitions/...` fragment), with every $ref inlined. */
export function dereferenced(ref: string): JsonSchema {
  let hit = cache.get(ref);
  if (!hit) {
    hit = dereference({ $ref: ref }, SCHEMA_BASE, byId);
    cache.set(ref, hit);
  }
  return hit;
}
