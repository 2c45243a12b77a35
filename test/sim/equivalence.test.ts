// One meaning for an Action (issue 19): the engine's in-memory `apply` — what the simulator, the engine's own
// fixpoint and the idempotence properties rely on — and the controller's executor, carrying the same actions out
// through an apiserver, leave the cluster in the same state. Over the engine's random mid-life snapshots
// (test/support/scenarios.ts), loaded into the simulation's apiserver: decide on what it serves, then compare
// apply(snapshot, actions) with what the executor made of them, object by object. The executor must carry every
// action out: no lost race (nothing changed since the read) and no refused delete (the engine only decides
// deletes its own judgement allows, and the executor judges again on state read for it).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { executorDeps, snapshotVersions } from '../../controller/execute/deps.js';
import { execute } from '../../controller/execute/executor.js';
import { apply } from '../../src/engine/apply.js';
import { decide } from '../../src/engine/decide.js';
import type { Snapshot } from '../../src/engine/types.js';
import { build, scenarioArb } from '../support/scenarios.js';
import { ApiServer, RESOURCES, type Obj } from './apiserver.js';
import { directClient } from './direct.js';

const FINALIZER = 'karpenter.sh/termination';
/** Wed 02:00–06:00 Asia/Tokyo of the scenarios' week, in minutes from their BASE: half the runs decide in it. */
const WINDOW_MINUTES = { from: 41 * 60, length: 4 * 60 };
/**
 * The scenarios as drawn, and as often without what blocks a rotation (operator holds, freezes, failures,
 * deletions), so that starts, placeholders, cordons and deletes are carried out too, not only refusals.
 */
const scenarios = fc
  .tuple(scenarioArb, fc.boolean(), fc.boolean(), fc.integer({ min: 0, max: WINDOW_MINUTES.length - 1 }))
  .map(([sc, inWindow, unblocked, m]) => ({
    ...sc,
    ...(inWindow ? { nowMinutes: WINDOW_MINUTES.from + m } : {}),
    ...(unblocked
      ? {
          freezeMinutes: undefined,
          lastRotationMinutesAgo: undefined,
          claims: sc.claims.map((c) => ({
            ...c,
            ready: true,
            operatorDnd: false,
            operatorCordon: false,
            failed: undefined,
            deleting: false,
          })),
        }
      : {}),
  }));
/** The apiserver's definition of a kind the engine reads (none of them is ambiguous, unlike Event). */
const defOf = (kind: string) => RESOURCES.find((r) => r.kind === kind)!;
const path = (kind: string, namespace?: string): string => {
  const d = defOf(kind);
  const base = d.group ? `/apis/${d.group}/${d.version}` : `/api/${d.version}`;
  return `${base}${d.namespaced && namespace ? `/namespaces/${namespace}` : ''}/${d.resource}`;
};

/** The snapshot's objects stored in a fresh apiserver; deleting ones deleted at their own deletionTimestamp. */
function load(s: Snapshot): { server: ApiServer; setClock: (t: number) => void } {
  let clock = 0;
  const server = new ApiServer({ now: () => clock });
  const kinds: [string, readonly { metadata: Obj['metadata'] }[]][] = [
    ['RotationPolicy', s.policies as never],
    ['NodePool', s.nodePools as never],
    ['NodeClaim', s.nodeClaims as never],
    ['Node', s.nodes as never],
    ['Pod', s.pods as never],
  ];
  for (const [kind, list] of kinds)
    for (const o of list) {
      const at = o.metadata.deletionTimestamp;
      const obj = structuredClone(o) as Obj;
      // Karpenter's finalizer is on every NodeClaim (a delete leaves it terminating, as apply does); on other
      // objects only to keep a deleting one terminating.
      if (kind === 'NodeClaim' || at) obj.metadata.finalizers = [...(obj.metadata.finalizers ?? []), FINALIZER];
      server.seed(path(kind, o.metadata.namespace), obj);
      if (at) {
        clock = Date.parse(at);
        const res = server.handle('setup', {
          method: 'DELETE',
          path: `${path(kind, o.metadata.namespace)}/${o.metadata.name}`,
        });
        if (res.code >= 300) throw new Error(`setup: delete ${kind} ${o.metadata.name}: ${JSON.stringify(res.body)}`);
      }
    }
  return { server, setClock: (t) => (clock = t) };
}

/** What the apiserver serves, in the form the engine reads (apiVersion and kind on every object). */
function served(server: ApiServer, namespace: string): Snapshot {
  const typed = <T>(kind: string): T[] => {
    const d = defOf(kind);
    const apiVersion = d.group ? `${d.group}/${d.version}` : d.version;
    return server.list(`${d.group}/${d.version}/${d.resource}`).map((o) => ({ apiVersion, kind, ...o }) as T);
  };
  return {
    policies: typed('RotationPolicy'),
    nodePools: typed('NodePool'),
    nodeClaims: typed('NodeClaim'),
    nodes: typed('Node'),
    pods: typed('Pod'),
    namespace,
  };
}

/** The state an action can change, per object, in name order: what apply and the executor must agree on. */
function essence(s: Snapshot): unknown {
  const meta = (o: { metadata: { name: string; namespace?: string; annotations?: Record<string, string> } }) => ({
    name: o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name,
    annotations: o.metadata.annotations ?? {},
  });
  const byName = <T extends { name: string }>(xs: T[]) => xs.sort((a, b) => a.name.localeCompare(b.name));
  return {
    nodePools: byName(s.nodePools.map(meta)),
    nodeClaims: byName(s.nodeClaims.map((c) => ({ ...meta(c), deleting: c.metadata.deletionTimestamp !== undefined }))),
    nodes: byName(s.nodes.map((n) => ({ ...meta(n), unschedulable: n.spec.unschedulable === true }))),
    // A deleted Pod is gone from apply's snapshot and terminating (or gone) on the apiserver: the live ones count.
    pods: byName(
      s.pods
        .filter((p) => p.metadata.deletionTimestamp === undefined)
        .map((p) => ({ ...meta(p), labels: p.metadata.labels ?? {}, spec: p.spec })),
    ),
  };
}

describe('the executor and apply give an action one meaning', () => {
  it('over random mid-life snapshots, the apiserver after the executor = apply(snapshot, actions)', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (sc) => {
        const built = build(sc);
        const { server, setClock } = load(built.s);
        setClock(built.now);
        const s = served(server, built.s.namespace);
        const now = built.now;
        const d = decide(s, now);
        const deps = executorDeps({
          client: directClient(server),
          namespace: s.namespace,
          versions: snapshotVersions(s),
          now: () => now,
        });
        for (const a of d.actions) await execute(a, deps); // a LostRace or Refused fails the property
        expect(essence(served(server, s.namespace))).toEqual(essence(apply(s, d.actions, now)));
      }),
      { numRuns: 1000 },
    );
  });
});
