// Fixes for the NodePools a MaintenancePlan governs (issue 21), decided for the plan as a whole. A fix moved into
// the plan (fix-target.ts) reaches every NodePool whose settings come from the same place, with a value worked
// out for one of them; and several NodePools' findings may point at the one plan field, each with its own value
// (a shared freeze, three NodePools, three different ends). So, per plan field, one value is offered to them all:
// the first of their values that, applied to the plan, clears every one of those findings and leaves every other
// NodePool's settings a valid policy without a new fatal finding. When none does, the findings keep their advice
// without the fix, and say why. `explain` and the Crossplane function share this, so they offer the same.
import type { Finding, Fix, Reason } from '../derivation/findings.js';
import { withoutFix } from '../derivation/findings.js';
import type { MaintenancePlan, RotationPolicy } from '../generated/api-types.js';
import type { NodePool } from '../karpenter/types.js';
import { setPath } from '../util/set-path.js';
import { expandPlan } from './expand.js';
import { planFinding, planTarget } from './fix-target.js';

/** One NodePool the plan governs: the deciding rule's index (−1 for none) and its findings as derived. */
export interface GovernedPool {
  nodePool: string;
  ruleIndex: number;
  findings: readonly Finding[];
}

/** The findings of a NodePool under a policy: how explain (or the function) analyses it. */
export type Analyse = (policy: RotationPolicy, pool: NodePool) => readonly Finding[];

/** What a plan makes of one NodePool: its spec, its fatal reasons and where its findings point, or its errors. */
type Outcome =
  | { spec: string; fatal: Set<string>; findings: { reason: Reason; at: string; field: string }[] }
  | { errors: string[] };

/** A finding at a plan field, with the value its own NodePool asks for. */
interface Member {
  nodePool: string;
  index: number;
  original: Finding;
  moved: Finding & { fix: Fix };
}

/** "NodePool a" / "NodePools a, b and c", with the verb "share" agreeing. */
function pools(names: readonly string[]): { names: string; verb: string } {
  if (names.length === 1) return { names: `NodePool ${names[0] as string}`, verb: 'shares' };
  return { names: `NodePools ${names.slice(0, -1).join(', ')} and ${names.at(-1) as string}`, verb: 'share' };
}

/**
 * What the plan makes of each NodePool: `before`'s outcome when its spec is unchanged, else its analysis (the
 * findings `known` already has for it, when given).
 */
function outcomes(
  plan: MaintenancePlan,
  nodePools: readonly NodePool[],
  analyse: Analyse,
  before?: Map<string, Outcome>,
  known?: ReadonlyMap<string, readonly Finding[]>,
) {
  const out = new Map<string, Outcome>();
  const byName = new Map(nodePools.map((p) => [p.metadata.name, p]));
  const expansion = expandPlan(plan, nodePools);
  const rules = plan.spec.rules ?? [];
  for (const e of expansion.errors) {
    const o = out.get(e.nodePool);
    out.set(e.nodePool, { errors: [...(o && 'errors' in o ? o.errors : []), `${e.path}: found ${e.found}`] });
  }
  for (const e of expansion.policies) {
    const spec = JSON.stringify(e.policy.spec);
    const was = before?.get(e.nodePool);
    if (was && 'spec' in was && was.spec === spec) {
      out.set(e.nodePool, was);
      continue;
    }
    const ruleIndex = rules.findIndex((r) => r.name === e.rule);
    const found = known?.get(e.nodePool) ?? analyse(e.policy, byName.get(e.nodePool) as NodePool);
    out.set(e.nodePool, {
      spec,
      fatal: new Set(found.filter((g) => g.severity === 'fatal').map((g) => g.reason)),
      findings: found.map((g) => ({
        reason: g.reason,
        at: g.fix?.object === 'RotationPolicy' ? planTarget(plan, ruleIndex, g.fix.path) : '',
        field: g.field,
      })),
    });
  }
  return out;
}

/** What a value at a plan field does: the members whose findings it leaves, and every NodePool it harms. */
interface Trial {
  kept: string[];
  harm: [string, string][];
}

/**
 * The findings of each NodePool the plan governs, with their RotationPolicy fixes moved into the plan and one
 * value per plan field, or none (and why), as the header says.
 */
export function planFixes(
  plan: MaintenancePlan,
  governed: readonly GovernedPool[],
  nodePools: readonly NodePool[],
  analyse: Analyse,
): Map<string, Finding[]> {
  const result = new Map<string, Finding[]>();
  const byPath = new Map<string, Member[]>();
  for (const g of governed) {
    const moved = g.findings.map((f) => planFinding(plan, g.ruleIndex, f));
    result.set(g.nodePool, moved);
    moved.forEach((m, index) => {
      if (m.fix?.object !== 'MaintenancePlan') return;
      const member = {
        nodePool: g.nodePool,
        index,
        original: g.findings[index] as Finding,
        moved: m as Member['moved'],
      };
      byPath.set(m.fix.path, [...(byPath.get(m.fix.path) ?? []), member]);
    });
  }
  if (byPath.size === 0) return result;

  let before: Map<string, Outcome> | undefined;
  const tried = new Map<string, Trial>();
  const trial = (path: string, value: Fix['value'], members: readonly Member[]): Trial => {
    const key = `${path}\0${JSON.stringify(value)}`;
    const known = tried.get(key);
    if (known) return known;
    before ??= outcomes(plan, nodePools, analyse, undefined, new Map(governed.map((g) => [g.nodePool, g.findings])));
    const after = outcomes(setPath(plan, path, value), nodePools, analyse, before);
    const kept = members
      .filter((m) => {
        const o = after.get(m.nodePool);
        const { reason, field } = m.original;
        return (
          o && 'findings' in o && o.findings.some((g) => g.reason === reason && (g.at === path || g.field === field))
        );
      })
      .map((m) => m.nodePool);
    const harm: [string, string][] = [];
    for (const [pool, o] of after) {
      const was = before.get(pool);
      if ('errors' in o) {
        const added = o.errors.filter((e) => !(was && 'errors' in was && was.errors.includes(e)));
        if (added.length > 0) harm.push([pool, `leave its settings an invalid policy (${added.join('; ')})`]);
      } else if (was && 'fatal' in was) {
        const added = [...o.fatal].filter((r) => !was.fatal.has(r));
        if (added.length > 0) harm.push([pool, `make it fatal there (${added.join(', ')})`]);
      }
    }
    const t = { kept, harm };
    tried.set(key, t);
    return t;
  };

  for (const [path, members] of byPath) {
    const values = [...new Map(members.map((m) => [JSON.stringify(m.moved.fix.value), m.moved.fix.value])).values()];
    // A NodePool that asked for this very value answers for what it does to itself (its own findings say so).
    const askers = (v: Fix['value']): Set<string> =>
      new Set(members.filter((m) => JSON.stringify(m.moved.fix.value) === JSON.stringify(v)).map((m) => m.nodePool));
    const chosen = values.find((v) => {
      const t = trial(path, v, members);
      return t.kept.length === 0 && t.harm.every(([pool]) => askers(v).has(pool));
    });
    const sharing = [...new Set(members.map((m) => m.nodePool))];
    for (const m of members) {
      const found = result.get(m.nodePool) as Finding[];
      const others = sharing.filter((p) => p !== m.nodePool);
      const value = chosen ?? m.moved.fix.value;
      const t = trial(path, value, members);
      // Offered to this NodePool only when it harms no other: one that asked for it may pay for it itself.
      const harm = t.harm.find(([pool]) => pool !== m.nodePool);
      found[m.index] =
        chosen !== undefined && harm === undefined
          ? shared(m, chosen, others)
          : withoutFix(m.original, notOffered(plan, path, value, m, others, harm));
    }
  }
  return result;
}

/** The finding with the value chosen for its plan field; the message says who shares it when others do. */
function shared(m: Member, value: Fix['value'], others: readonly string[]): Finding {
  const fix = { ...m.moved.fix, value };
  if (others.length === 0) return { ...m.moved, fix };
  const where = `Set it in MaintenancePlan ${fix.name ?? ''} at ${fix.path}`;
  const own = m.moved.fix.value;
  const them = pools(others);
  const text =
    JSON.stringify(own) === JSON.stringify(value)
      ? `${where}, which ${them.names} ${them.verb}: this value clears their findings there too.`
      : `${where} to ${String(value)}: ${them.names} ${them.verb} that field, and ${String(value)} clears this ` +
        `finding and theirs (${String(own)} is enough for this NodePool alone).`;
  return { ...m.original, message: `${m.original.message} ${text}`, fix };
}

/** Why no value is offered for this finding's plan field: the value (chosen, or its own) harms another NodePool. */
function notOffered(
  plan: MaintenancePlan,
  path: string,
  value: Fix['value'],
  m: Member,
  others: readonly string[],
  harm: [string, string] | undefined,
): string {
  const name = plan.metadata.name;
  const ruleOfItsOwn = `give NodePool ${m.nodePool} a rule of its own and set it there.`;
  const at = `${path} = ${JSON.stringify(value)} in MaintenancePlan ${name}`;
  if (harm) return `Not offered as a fix: ${at} would also reach NodePool ${harm[0]} and ${harm[1]}; ${ruleOfItsOwn}`;
  if (others.length === 0) return `Not offered as a fix: ${at} leaves it; ${ruleOfItsOwn}`;
  return (
    `Not offered as a fix: ${path} in MaintenancePlan ${name} is shared with ${pools(others).names}, and no ` +
    `one value clears all their findings there without breaking another NodePool; ${ruleOfItsOwn}`
  );
}
