// `explain`: for each NodePool, the governing policy, the §3.2 figures and every finding. Pure: documents
// and the clock come in, a report goes out.
import type { Inputs } from '../api/documents.js';
import type { MaintenancePlan, MaintenanceWindow, RotationPolicy } from '../generated/api-types.js';
import { nodePoolOf, type NodeClaim, type NodePool } from '../karpenter/types.js';
import { derive, NULL_FIGURES, type Figures } from '../derivation/derive.js';
import { finding, type Finding, type Fix } from '../derivation/findings.js';
import { policyParams } from '../derivation/params.js';
import { shortLeadFindings } from '../derivation/short-lead.js';
import { expandPlan, planTargetFindings, unknownNodePoolFindings, type ExpansionError } from '../plan/expand.js';
import { planFinding, withoutFix } from '../plan/fix-target.js';
import { governingPolicy } from '../policy/resolve.js';
import { selectorFindings } from '../policy/selector-findings.js';
import type { WindowFigures } from '../schedule/windows.js';
import { figuresCache } from '../schedule/figures-cache.js';
import { setPath } from '../util/set-path.js';
import { forecastJson, forecastOf, type ClaimForecast } from '../forecast/forecast.js';
import { poolPreFreezeFindings } from '../forecast/pre-freeze.js';

export interface ReportFinding {
  severity: 'fatal' | 'warning';
  reason: string;
  message: string;
  /** The one change the message suggests, when it is one value (docs/api.md, Findings). */
  fix?: Fix;
}

export interface NodePoolReport extends Figures {
  nodePool: string;
  policy: string | null;
  findings: ReportFinding[];
  /** Per NodeClaim (docs/api.md, Forecast); only when NodeClaims are given. */
  forecast?: ClaimForecast[];
}

export interface ExplainResult {
  report: { nodePools: NodePoolReport[] };
  /** NodePools a plan's rule excluded (for the table; the JSON reports them as ungoverned). */
  excluded: { nodePool: string; plan: string; rule: string }[];
  /** A plan whose merged settings do not form a valid policy for some NodePool (input errors). */
  planErrors: (ExpansionError & { plan: string })[];
  /**
   * Findings about an input object as a whole, not one NodePool's: a plan that governs nothing, a name in a
   * plan's rule or a policy's spec.nodePools that no NodePool has. `object` is "MaintenancePlan web" or the like.
   */
  inputFindings: (Finding & { object: string })[];
}

export interface PoolAnalysis {
  figures: Figures;
  findings: Finding[];
}

/** Figures and findings for one NodePool under one policy: layers 1 and 2, and layer 3 over its claims. */
export function analysePool(
  policy: RotationPolicy,
  pool: NodePool,
  claims: readonly NodeClaim[] | null,
  figuresFor: (w: readonly MaintenanceWindow[]) => WindowFigures,
  now: number,
): PoolAnalysis {
  const params = policyParams(policy.spec);
  const live = claims?.filter((c) => !c.metadata.deletionTimestamp) ?? null;
  let windows: WindowFigures;
  try {
    windows = figuresFor(params.windows);
  } catch {
    // An invalid zone: derive reports it.
    windows = { empty: false, continuous: false, periodSeconds: 0, minDurationSeconds: 0, minGapSeconds: null };
  }
  const d = derive({
    params,
    pool,
    windows,
    nodeCount: live ? live.length : (pool.status?.nodes ?? null),
    nodeClaims: live ?? [],
    now,
  });
  const findings = [...d.findings];
  if (live && d.figures.windowPeriodSeconds !== null && !windows.empty) {
    findings.push(
      ...shortLeadFindings({
        claims: live,
        minRotationChances: params.minRotationChances,
        periodSeconds: d.figures.windowPeriodSeconds,
        readyTimeout: params.readyTimeout,
      }),
    );
  }
  // Fatal first, then in the order of the design's tables.
  findings.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'fatal' ? -1 : 1));
  return { figures: d.figures, findings };
}

export function explain(
  inputs: Pick<Inputs, 'policies' | 'plans' | 'nodePools' | 'nodeClaims'>,
  now: number,
): ExplainResult {
  const result: ExplainResult = { report: { nodePools: [] }, excluded: [], planErrors: [], inputFindings: [] };
  const origins: PlanOrigins = new Map();
  const policies = effectivePolicies(inputs, { ...result, origins });
  const claimsGiven = inputs.nodeClaims.length > 0;
  const claimsOf = (name: string): NodeClaim[] | null =>
    claimsGiven ? inputs.nodeClaims.filter((c) => nodePoolOf(c) === name) : null;
  const figuresFor = figuresCache().at(now);
  const checkPlanFix = planFixCheck({ nodePools: inputs.nodePools, claimsOf, figuresFor, now });
  const pools = [...inputs.nodePools].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  for (const pool of pools) {
    const name = pool.metadata.name;
    const gov = governingPolicy(pool, policies);
    if (gov.kind === 'ungoverned') {
      result.report.nodePools.push({ nodePool: name, policy: null, ...NULL_FIGURES, findings: [] });
      continue;
    }
    if (gov.kind === 'conflict') {
      const f = finding(
        'PolicyConflict',
        'spec.nodePoolSelector',
        `RotationPolicies ${gov.policies.join(', ')} match NodePool ${name} equally specifically, so it is not ` +
          'rotated. Make one selector more specific, name the NodePool in spec.nodePools of one policy, ' +
          'or remove the others.',
      );
      result.report.nodePools.push({ nodePool: name, policy: null, ...NULL_FIGURES, findings: [strip(f)] });
      continue;
    }
    const claims = claimsOf(name);
    const a = analysePool(gov.policy, pool, claims, figuresFor, now);
    // Null without NodeClaims, or when the figures it needs are unknown (an invalid zone).
    const ahead = claims && forecastOf(gov.policy, pool, claims, a.figures, now);
    const origin = origins.get(gov.policy);
    // A policy a plan generated: its fixes go into the plan, and only those that break no other NodePool.
    const found = [...a.findings, ...poolPreFreezeFindings(gov.policy, a.figures, ahead)];
    const findings = origin ? found.map((f) => checkPlanFix(origin, name, f)) : found;
    result.report.nodePools.push({
      nodePool: name,
      policy: gov.policy.metadata.name,
      ...a.figures,
      findings: findings.map(strip),
      ...(ahead ? { forecast: ahead } : {}),
    });
  }
  return result;
}

const strip = (f: ReportFinding | Finding): ReportFinding => ({
  severity: f.severity,
  reason: f.reason,
  message: f.message,
  ...(f.fix ? { fix: f.fix } : {}),
});

/**
 * The JSON form, keys in the documented order: per NodePool, and `findings` about the input objects as a whole
 * (each naming its object and field), so that the machine output carries every finding the text shows.
 */
export function reportJson(report: ExplainResult['report'], inputFindings: ExplainResult['inputFindings']): string {
  const pools = report.nodePools.map((p) => ({
    nodePool: p.nodePool,
    policy: p.policy,
    windowPeriodSeconds: p.windowPeriodSeconds,
    rotationBoundSeconds: p.rotationBoundSeconds,
    leadTimeSeconds: p.leadTimeSeconds,
    ageThresholdSeconds: p.ageThresholdSeconds,
    guaranteedChances: p.guaranteedChances,
    expectedRotationSeconds: p.expectedRotationSeconds,
    capacityPerOccurrence: p.capacityPerOccurrence,
    findings: p.findings.map(strip),
    ...(p.forecast ? { forecast: p.forecast.map(forecastJson) } : {}),
  }));
  const findings = inputFindings.map((f) => ({ object: f.object, field: f.field, ...strip(f) }));
  return `${JSON.stringify({ nodePools: pools, findings }, null, 2)}\n`;
}

/**
 * The RotationPolicies in effect: those given, plus each MaintenancePlan's expansion. Plan problems (invalid
 * merged settings, exclusions, a plan that governs nothing) are added to `result` when given.
 */
export function effectivePolicies(
  inputs: Pick<Inputs, 'policies' | 'plans' | 'nodePools'>,
  result: Pick<ExplainResult, 'excluded' | 'planErrors' | 'inputFindings'> & { origins?: PlanOrigins } = {
    excluded: [],
    planErrors: [],
    inputFindings: [],
  },
): RotationPolicy[] {
  const policies: RotationPolicy[] = inputs.policies.map(({ source: _source, ...p }) => p);
  for (const p of policies) {
    const object = `RotationPolicy ${p.metadata.name}`;
    const names = p.spec.nodePools ?? [];
    for (const f of unknownNodePoolFindings(names, 'spec.nodePools', inputs.nodePools, 'the policy', 'RotationPolicy'))
      result.inputFindings.push({ ...f, object });
    const selector = p.spec.nodePoolSelector;
    const target = { path: 'spec.nodePoolSelector', owner: 'the policy', kind: 'RotationPolicy' } as const;
    const effect = 'the policy governs no NodePool';
    if (selector && !p.spec.nodePools)
      for (const f of selectorFindings({ ...target, selector, effect }, inputs.nodePools))
        result.inputFindings.push({ ...f, object });
  }
  for (const plan of inputs.plans) {
    const object = `MaintenancePlan ${plan.metadata.name}`;
    for (const f of planTargetFindings(plan, inputs.nodePools)) result.inputFindings.push({ ...f, object });
    const expansion = expandPlan(plan, inputs.nodePools);
    for (const e of expansion.errors) result.planErrors.push({ ...e, plan: plan.metadata.name });
    for (const x of expansion.excluded) result.excluded.push({ ...x, plan: plan.metadata.name });
    const rules = plan.spec.rules ?? [];
    for (const e of expansion.policies) {
      policies.push(e.policy);
      result.origins?.set(e.policy, { plan, ruleIndex: rules.findIndex((r) => r.name === e.rule) });
    }
    if (expansion.policies.length === 0 && expansion.errors.length === 0) {
      result.inputFindings.push({
        ...finding(
          'NoGovernedNodePools',
          'spec.nodePoolSelector',
          `the plan governs none of the ${inputs.nodePools.length} NodePools given` +
            (expansion.excluded.length > 0 ? ` (${expansion.excluded.length} excluded by rules)` : '') +
            "; a plan that rotates nothing is a mistake. Check spec.nodePoolSelector and the rules' exclude.",
        ),
        object,
      });
    }
  }
  return policies;
}

/** The plan and deciding rule (its index, −1 for none) of each policy a plan generated. */
interface PlanOrigin {
  plan: MaintenancePlan;
  ruleIndex: number;
}
type PlanOrigins = Map<RotationPolicy, PlanOrigin>;

interface PlanFixContext {
  nodePools: readonly NodePool[];
  claimsOf: (nodePool: string) => NodeClaim[] | null;
  figuresFor: (w: readonly MaintenanceWindow[]) => WindowFigures;
  now: number;
}

/** What a plan makes of each NodePool: its generated spec and fatal reasons, or its expansion errors. */
type PlanOutcomes = Map<string, { spec: string; fatal: Set<string> } | { errors: string[] }>;

/**
 * A fix moved into a plan reaches every NodePool whose settings come from the same place (all the pools its
 * rule decides, or every pool on the defaults), with a value worked out for one of them. It is offered only
 * when, applied to the plan, every other NodePool's settings still form a valid policy and none gains a fatal
 * finding; otherwise the finding keeps its advice, without the fix, and says what the value would break.
 * Each distinct (plan, path, value) is tried once, and only the NodePools whose settings it changes are
 * analysed again.
 */
function planFixCheck(ctx: PlanFixContext): (origin: PlanOrigin, nodePool: string, f: Finding) => Finding {
  const byName = new Map(ctx.nodePools.map((p) => [p.metadata.name, p]));
  const outcomes = (plan: MaintenancePlan, before?: PlanOutcomes): PlanOutcomes => {
    const out: PlanOutcomes = new Map();
    const expansion = expandPlan(plan, ctx.nodePools);
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
      const pool = byName.get(e.nodePool) as NodePool;
      const a = analysePool(e.policy, pool, ctx.claimsOf(e.nodePool), ctx.figuresFor, ctx.now);
      out.set(e.nodePool, {
        spec,
        fatal: new Set(a.findings.filter((g) => g.severity === 'fatal').map((g) => g.reason)),
      });
    }
    return out;
  };
  /** Per plan: what it makes of each pool, and what each tried fix would do to them (pool → harm). */
  const plans = new Map<MaintenancePlan, { before: PlanOutcomes; tried: Map<string, Map<string, string>> }>();
  const harmOf = (plan: MaintenancePlan, fix: Fix): Map<string, string> => {
    let known = plans.get(plan);
    if (!known) plans.set(plan, (known = { before: outcomes(plan), tried: new Map() }));
    const key = `${fix.path}\0${JSON.stringify(fix.value)}`;
    const tried = known.tried.get(key);
    if (tried) return tried;
    const before = known.before;
    const harm = new Map<string, string>();
    for (const [pool, o] of outcomes(setPath(plan, fix.path, fix.value), before)) {
      const was = before.get(pool);
      if ('errors' in o) {
        const added = o.errors.filter((e) => !(was && 'errors' in was && was.errors.includes(e)));
        if (added.length > 0) harm.set(pool, `leave its settings an invalid policy (${added.join('; ')})`);
      } else if (was && 'fatal' in was) {
        const added = [...o.fatal].filter((r) => !was.fatal.has(r));
        if (added.length > 0) harm.set(pool, `make it fatal there (${added.join(', ')})`);
      }
    }
    known.tried.set(key, harm);
    return harm;
  };
  return ({ plan, ruleIndex }, nodePool, f) => {
    const moved = planFinding(plan, ruleIndex, f);
    const fix = moved.fix;
    if (fix?.object !== 'MaintenancePlan') return moved;
    const harm = [...harmOf(plan, fix)].find(([pool]) => pool !== nodePool);
    if (!harm) return moved;
    return withoutFix(
      f,
      `Not offered as a fix: ${fix.path} = ${JSON.stringify(fix.value)} in MaintenancePlan ${plan.metadata.name} ` +
        `would also reach NodePool ${harm[0]} and ${harm[1]}; give NodePool ${nodePool} a rule of its own ` +
        'and set it there.',
    );
  };
}
