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
import { planFixes, type GovernedPool } from '../plan/plan-fixes.js';
import { governingPolicy } from '../policy/resolve.js';
import { matches } from '../policy/selector.js';
import { selectorFindings, whyNothingMatches } from '../policy/selector-findings.js';
import type { WindowFigures } from '../schedule/windows.js';
import { figuresCache } from '../schedule/figures-cache.js';
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
  // Per plan, the NodePools it governs and their findings as derived: their fixes are decided for the plan.
  const governed = new Map<MaintenancePlan, (GovernedPool & { report: NodePoolReport })[]>();
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
    const findings = [...a.findings, ...poolPreFreezeFindings(gov.policy, a.figures, ahead)];
    const report: NodePoolReport = {
      nodePool: name,
      policy: gov.policy.metadata.name,
      ...a.figures,
      findings: findings.map(strip),
      ...(ahead ? { forecast: ahead } : {}),
    };
    result.report.nodePools.push(report);
    if (origin)
      governed.set(origin.plan, [
        ...(governed.get(origin.plan) ?? []),
        { nodePool: name, ruleIndex: origin.ruleIndex, findings, report },
      ]);
  }
  // A policy a plan generated: its fixes go into the plan, one value per plan field for every NodePool there.
  const analyse = (policy: RotationPolicy, pool: NodePool): Finding[] =>
    analysePool(policy, pool, claimsOf(pool.metadata.name), figuresFor, now).findings;
  for (const [plan, members] of governed) {
    const fixed = planFixes(plan, members, inputs.nodePools, analyse);
    for (const m of members) m.report.findings = (fixed.get(m.nodePool) ?? []).map(strip);
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
    if (expansion.policies.length === 0 && expansion.errors.length === 0)
      result.inputFindings.push({ ...noGovernedNodePools(plan, inputs.nodePools, expansion.excluded.length), object });
  }
  return policies;
}

/**
 * NoGovernedNodePools: the plan governs none of `pools`. When its own spec.nodePoolSelector selects none of them,
 * the message says which term no NodePool satisfies and what it was likely meant to say (a misspelt label is the
 * usual cause), and the fix sets that value when it cures the selector; otherwise the rules excluded them all.
 */
function noGovernedNodePools(plan: MaintenancePlan, pools: readonly NodePool[], excluded: number): Finding {
  const selector = plan.spec.nodePoolSelector;
  const given = `${pools.length} NodePools given`;
  const mistake = 'a plan that rotates nothing is a mistake';
  if (selector && pools.length > 0 && !pools.some((p) => matches(selector, p.metadata.labels))) {
    const path = 'spec.nodePoolSelector';
    const miss = whyNothingMatches({ selector, path, kind: 'MaintenancePlan' }, pools);
    const advice = miss.fix ? `Set ${miss.fix.path} to ${String(miss.fix.value)}` : `Fix ${path}`;
    return finding(
      'NoGovernedNodePools',
      miss.field,
      `the plan's ${path} selects none of the ${given}: ${miss.why}; ${mistake}. ${advice}.`,
      miss.fix,
    );
  }
  return finding(
    'NoGovernedNodePools',
    'spec.nodePoolSelector',
    `the plan governs none of the ${given}` +
      (excluded > 0 ? ` (${excluded} excluded by rules)` : '') +
      `; ${mistake}. Check spec.nodePoolSelector and the rules' exclude.`,
  );
}

/** The plan and deciding rule (its index, −1 for none) of each policy a plan generated. */
interface PlanOrigin {
  plan: MaintenancePlan;
  ruleIndex: number;
}
type PlanOrigins = Map<RotationPolicy, PlanOrigin>;
