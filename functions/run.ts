// RunFunction for function-noderotation, as a pure function of the request: the observed composite is a
// MaintenancePlan, the required resources are the cluster's NodePools, and the answer is one desired
// RotationPolicy per governed NodePool with the §3.2 figures as annotations, or a FATAL result and the
// desired state untouched. The gRPC server (server.ts) is a thin shell around it; `noderotation render`
// calls it offline. No clock, no I/O: the calendar start comes from the caller (or the step input).
import {
  Ready,
  Severity,
  Status,
  type Condition,
  type Requirements,
  type Resource,
  type Resources,
  type Result,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '@crossplane-org/function-sdk-typescript';
import type { MaintenancePlan, NodePoolSummary, RotationPolicy } from '../src/generated/api-types.js';
import type { NodePool } from '../src/karpenter/types.js';
import { validateAgainst } from '../src/api/validate.js';
import type { Figures } from '../src/derivation/derive.js';
import { fieldLabel, type Finding } from '../src/derivation/findings.js';
import { analysePool, explain } from '../src/explain/explain.js';
import { expandPlan, planTargetFindings, shortenName } from '../src/plan/expand.js';
import { planOrigin } from '../src/plan/fix-target.js';
import { planFixes } from '../src/plan/plan-fixes.js';
import { sortKeys } from '../src/util/canonical.js';
import { parseDuration, parseExpireAfter } from '../src/util/duration.js';
import { figureValues, type FigureValues } from '../src/derivation/figure-text.js';
import { deepFreeze } from '../src/engine/boundary.js';
import { figuresCache, type FiguresCache, type FiguresFor } from '../src/schedule/figures-cache.js';
import type { OutcomeMemo } from './memo.js';
import { parseInput } from './input.js';
import type { JsonObject, JsonValue } from './json.js';
import { shown } from './show.js';

const PLAN_API_VERSION = 'noderotation.io/v1alpha1';
/** The most results one response carries; the rest are counted in the last one. */
export const MAX_RESULTS = 1000;
/** The key of the required resources: every karpenter.sh/v1 NodePool. */
export const NODEPOOLS = 'nodepools';
export const PLAN_VALID = 'PlanValid';
/**
 * Crossplane calls again after this long even without a change (the Go SDK's default): the delay before a new
 * NodePool is governed, as Crossplane does not watch required resources. `--response-ttl` changes it.
 */
export const TTL_SECONDS = 60;

/** Annotations on each RotationPolicy carrying the derived figures (docs/function.md), by figure name. */
export const FIGURE_ANNOTATIONS = {
  windowPeriod: 'noderotation.io/window-period',
  rotationBound: 'noderotation.io/rotation-bound',
  leadTime: 'noderotation.io/lead-time',
  ageThreshold: 'noderotation.io/age-threshold',
  guaranteedChances: 'noderotation.io/guaranteed-chances',
  expectedRotation: 'noderotation.io/expected-rotation',
  capacityPerOccurrence: 'noderotation.io/capacity-per-occurrence',
} as const satisfies Record<keyof FigureValues, string>;
export const RULE_ANNOTATION = 'noderotation.io/rule';

/** Reasons of results that are about malformed input rather than a plan that cannot work. */
export const INPUT_REASONS = new Set([
  'InvalidPlan',
  'InvalidPolicy',
  'InvalidInput',
  'InvalidNodePool',
  'InvalidTimezone',
]);

export interface RunEnv {
  /**
   * Epoch ms the window figures start from unless the step input sets calendarStart: the shell passes the start of the
   * current UTC day.
   */
  calendarStart: number;
  /** Shared across calls by the server; a fresh one per call otherwise. */
  figures?: FiguresCache;
  /** Per-NodePool outcomes shared across calls by the server (memo.ts); none: everything is computed. */
  memo?: OutcomeMemo;
  /** The response's meta.ttl in whole seconds; TTL_SECONDS when unset. */
  ttlSeconds?: number;
}

/** The same requirement on every call, so Crossplane's requirements loop ends after the second call. */
export function requirements(): Requirements {
  return {
    extraResources: {},
    resources: { [NODEPOOLS]: { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', matchLabels: { labels: {} } } },
    schemas: {},
  };
}

/**
 * The NodePools Crossplane fetched for us (required_resources; extra_resources before Crossplane v2), or undefined
 * before it has.
 */
export function suppliedNodePools(req: RunFunctionRequest): Resources | undefined {
  return req.requiredResources[NODEPOOLS] ?? req.extraResources[NODEPOOLS];
}

/** A problem found in the request; becomes one FATAL or WARNING result. */
export interface Problem {
  severity: 'fatal' | 'warning';
  reason: string;
  nodePool: string | null;
  message: string;
}

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export function run(req: RunFunctionRequest, env: RunEnv): RunFunctionResponse {
  const rsp: RunFunctionResponse = {
    meta: { tag: req.meta?.tag ?? '', ttl: { seconds: env.ttlSeconds ?? TTL_SECONDS, nanos: 0 } },
    // Pass-through: what earlier steps desired stays exactly as it was unless we succeed below.
    desired: req.desired,
    results: [],
    context: req.context,
    requirements: requirements(),
    conditions: [],
  };
  const supplied = suppliedNodePools(req);
  // First call of the requirements loop: Crossplane has not fetched the NodePools yet. Answer with the
  // requirement only; judging the plan now would be judging it against no NodePools.
  if (supplied === undefined) return rsp;

  const problems: Problem[] = [];
  const fatal = (reason: string, nodePool: string | null, message: string): void => {
    problems.push({ severity: 'fatal', reason, nodePool, message });
  };

  const { input, errors: inputErrors } = parseInput(req.input);
  for (const e of inputErrors)
    fatal(
      'InvalidInput',
      null,
      `Composition step input: ${e.path}: found ${e.found}; allowed: ${e.allowed}. ` +
        "Fix the input of this function's step in the Composition.",
    );
  const calendarStart = input.calendarStart ?? env.calendarStart;

  const plan = readPlan(req.observed?.composite?.resource, fatal);
  const pools = readNodePools(supplied, fatal);
  if (plan === null || pools === null || problems.length > 0) return finish(rsp, problems, null);

  // One NodePool at a time: expandPlan decides each pool independently (its selector and first matching
  // rule), so the per-pool outcome can be memoised across calls (memo.ts) while the totals are ours.
  const figuresFor = (env.figures ?? figuresCache()).at(calendarStart);
  const planKey = env.memo ? `${calendarStart} ${env.memo.key(plan)}` : '';
  const sortedPools = [...pools].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const outcomes = sortedPools.map((pool) =>
    env.memo
      ? env.memo.get(planKey, pool, () => poolOutcome(plan, pool, figuresFor, calendarStart))
      : poolOutcome(plan, pool, figuresFor, calendarStart),
  );
  const governed = outcomes.filter((o): o is Extract<PoolOutcome, { kind: 'policy' }> => o.kind === 'policy');
  const excluded = outcomes.filter((o) => o.kind === 'excluded').length;
  for (const o of outcomes) if (o.kind === 'invalid') problems.push(...o.problems);
  // The fixes are decided for the plan as a whole, as explain decides them (one value per plan field); the
  // decision depends only on the per-NodePool outcomes, so a call whose outcomes all repeat looks it up.
  const decide = (): Map<string, Finding[]> =>
    planFixes(
      plan,
      governed,
      pools,
      (policy, pool) => analysePool(policy, pool, null, figuresFor, calendarStart).findings,
    );
  const fixed = env.memo ? env.memo.fixes(planKey, outcomes, decide) : decide();
  for (const o of governed) problems.push(...poolProblems(plan, o, fixed.get(o.nodePool) ?? []));
  if (problems.some((p) => p.severity === 'fatal')) return finish(rsp, problems, null);
  // Names and selectors in the plan's rules that match no NodePool (or only ones the plan leaves out): warnings.
  for (const f of planTargetFindings(plan, pools))
    problems.push({
      severity: f.severity,
      reason: f.reason,
      nodePool: null,
      message: `MaintenancePlan ${plan.metadata.name}: ${f.field}: ${f.message}`,
    });
  if (governed.length === 0) {
    // explain owns the wording of plan-level findings; with nothing governed it does no analysis.
    for (const f of explain(
      {
        plans: [{ ...plan, source: { file: 'observed.composite', document: 1 } }],
        policies: [],
        nodePools: pools,
        nodeClaims: [],
      },
      calendarStart,
    ).inputFindings.filter((x) => x.severity === 'fatal')) {
      fatal(f.reason, null, `MaintenancePlan ${plan.metadata.name}: ${f.field}: ${f.message}`);
    }
    return finish(rsp, problems, null);
  }

  const resources: Record<string, Resource> = { ...(req.desired?.resources ?? {}) };
  for (const o of governed) resources[o.key] = { resource: o.policy, connectionDetails: {}, ready: Ready.READY_TRUE };
  rsp.desired = {
    composite: compositeWithStatus(
      req,
      governed.map((o) => o.summary),
    ),
    // Sorted so that the response does not depend on the order earlier steps added their resources in.
    resources: Object.fromEntries(
      Object.keys(resources)
        .sort()
        .map((k) => [k, resources[k] as Resource]),
    ),
  };
  return finish(
    rsp,
    problems,
    `${count(governed.length, 'NodePool')} governed, ${count(excluded, 'NodePool')} excluded by rules, ` +
      `${count(problems.length, 'warning')}.`,
  );
}

/** What the plan makes of one NodePool. Shared (memoised) between calls: never mutated after creation. */
export type PoolOutcome =
  | { kind: 'ungoverned' | 'excluded' }
  | { kind: 'invalid'; problems: Problem[] }
  | {
      kind: 'policy';
      key: string;
      policy: RotationPolicy;
      summary: NodePoolSummary;
      nodePool: string;
      /** The deciding rule's index, −1 for none; the rule's name for messages. */
      ruleIndex: number;
      rule: string | null;
      /** The findings as derived, before their fixes are moved into the plan (planFixes). */
      findings: readonly Finding[];
    };

/** One governed NodePool's findings as results: each names the NodePool, its policy and rule, and the field. */
function poolProblems(
  plan: MaintenancePlan,
  o: Extract<PoolOutcome, { kind: 'policy' }>,
  findings: readonly Finding[],
): Problem[] {
  const where = `NodePool ${o.nodePool} (RotationPolicy ${o.policy.metadata.name}${o.rule ? `, rule ${o.rule}` : ''})`;
  return findings.map((f) => ({
    severity: f.severity,
    reason: f.reason,
    nodePool: o.nodePool,
    // The message explain gives: a fix to the generated policy names the plan field to set instead.
    message: `${where}: ${planField(plan, o.ruleIndex, f)}: ${f.message}`,
  }));
}

function poolOutcome(plan: MaintenancePlan, pool: NodePool, figuresFor: FiguresFor, now: number): PoolOutcome {
  try {
    return analyseOne(plan, pool, figuresFor, now);
  } catch (err) {
    // A NodePool field the derivation cannot read (e.g. spec.limits.cpu: "lots") throws deep inside it;
    // the answer is still a FATAL result naming the NodePool, never a failed call.
    const name = pool.metadata.name;
    return {
      kind: 'invalid',
      problems: [
        {
          severity: 'fatal',
          reason: 'InvalidNodePool',
          nodePool: name,
          message:
            `NodePool ${name} (required resource ${NODEPOOLS}) cannot be analysed: ` +
            `${err instanceof Error ? err.message : shown(err)}. Fix the NodePool.`,
        },
      ],
    };
  }
}

function analyseOne(plan: MaintenancePlan, pool: NodePool, figuresFor: FiguresFor, now: number): PoolOutcome {
  const expansion = expandPlan(plan, [pool]);
  if (expansion.excluded.length > 0) return { kind: 'excluded' };
  if (expansion.errors.length > 0) {
    return {
      kind: 'invalid',
      problems: expansion.errors.map((e) => ({
        severity: 'fatal',
        reason: e.reason ?? 'InvalidPolicy',
        nodePool: e.nodePool,
        message:
          `MaintenancePlan ${plan.metadata.name}, NodePool ${e.nodePool}: ${e.path}: found ${e.found}; ` +
          `allowed: ${e.allowed}. Fix that field of the plan ` +
          '(the merged settings for this NodePool are not a valid RotationPolicy).',
      })),
    };
  }
  const expanded = expansion.policies[0];
  if (!expanded) return { kind: 'ungoverned' };
  const { nodePool, rule, policy } = expanded;
  const { figures, findings } = analysePool(policy, pool, null, figuresFor, now);
  const ruleIndex = rule === null ? -1 : (plan.spec.rules ?? []).findIndex((r) => r.name === rule);
  return {
    kind: 'policy',
    key: resourceKey(nodePool),
    // Frozen: shared between calls through the memo.
    policy: deepFreeze(annotate(policy, figures, rule)),
    summary: summary(nodePool, policy, rule, figures, findings),
    nodePool,
    ruleIndex,
    rule,
    findings: deepFreeze(findings),
  };
}

/** Results (fatal first, then by NodePool) and the PlanValid condition. `accepted` is null on failure. */
function finish(rsp: RunFunctionResponse, problems: Problem[], accepted: string | null): RunFunctionResponse {
  const order = (p: Problem): string => `${p.severity === 'fatal' ? 0 : 1}${p.nodePool ?? ''}`;
  // Stable sort: within one NodePool the findings keep analysePool's order (the design's tables).
  const sorted = [...problems].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
  // Bounded: a request crafted to hold thousands of problems must not produce a response too large to send.
  const listed = sorted.slice(0, MAX_RESULTS - (sorted.length > MAX_RESULTS ? 1 : 0));
  rsp.results = listed.map((p) =>
    result(p.severity === 'fatal' ? Severity.SEVERITY_FATAL : Severity.SEVERITY_WARNING, p.reason, p.message),
  );
  if (listed.length < sorted.length) {
    const rest = sorted.slice(listed.length);
    rsp.results.push(
      result(
        rest.some((p) => p.severity === 'fatal') ? Severity.SEVERITY_FATAL : Severity.SEVERITY_WARNING,
        rest[0]?.reason ?? '',
        `…and ${rest.length} more problem(s) not listed (at most ${MAX_RESULTS} results are returned).`,
      ),
    );
  }
  const first = sorted.find((p) => p.severity === 'fatal');
  const fatalCount = sorted.filter((p) => p.severity === 'fatal').length;
  rsp.conditions = [
    accepted !== null || !first
      ? condition(Status.STATUS_CONDITION_TRUE, 'Accepted', accepted ?? '')
      : condition(
          Status.STATUS_CONDITION_FALSE,
          first.reason,
          fatalCount > 1
            ? `${first.message} (and ${fatalCount - 1} more fatal problem(s); see the events)`
            : first.message,
        ),
  ];
  return rsp;
}

const result = (severity: Severity, reason: string, message: string): Result => ({ severity, reason, message });

const condition = (status: Status, reason: string, message: string): Condition => ({
  type: PLAN_VALID,
  status,
  reason,
  message,
});

/**
 * `rotationpolicy-<nodepool>`, the composition resource name: stable, hashed only beyond a label value's 63 characters.
 */
export function resourceKey(nodePool: string): string {
  return shortenName(`rotationpolicy-${nodePool}`, 63);
}

function readPlan(
  xr: JsonObject | undefined,
  fatal: (r: string, p: string | null, m: string) => void,
): MaintenancePlan | null {
  if (!isObject(xr)) {
    fatal(
      'InvalidPlan',
      null,
      'The request has no observed composite resource: ' +
        'this function composes a MaintenancePlan XR (see examples/crossplane).',
    );
    return null;
  }
  if (xr.apiVersion !== PLAN_API_VERSION || xr.kind !== 'MaintenancePlan') {
    fatal(
      'InvalidPlan',
      null,
      `The observed composite resource is not a MaintenancePlan: apiVersion/kind: found ${shown(xr.apiVersion)} ` +
        `${shown(xr.kind)}; allowed: ${PLAN_API_VERSION} MaintenancePlan. This function composes only XRs of the ` +
        "MaintenancePlan XRD (examples/crossplane/xrd.yaml); use it in that XRD's Composition only.",
    );
    return null;
  }
  const name = isObject(xr.metadata) ? xr.metadata.name : undefined;
  if (typeof name !== 'string' || name === '') {
    fatal('InvalidPlan', null, `The MaintenancePlan has no metadata.name: found ${shown(name)}; allowed: a name.`);
    return null;
  }
  if (!isObject(xr.spec)) {
    fatal(
      'InvalidPlan',
      null,
      `MaintenancePlan ${name}: spec: found ${shown(xr.spec)}; allowed: an object with at least ` +
        "spec.defaults.maintenanceWindows. Add the plan's spec.",
    );
    return null;
  }
  // spec.crossplane is Crossplane's own (composition reference, resource references), not part of the plan.
  const { crossplane: _crossplane, ...spec } = xr.spec;
  const plan = { apiVersion: PLAN_API_VERSION, kind: 'MaintenancePlan', metadata: { name }, spec };
  const errors = validateAgainst('maintenancePlan', plan);
  for (const e of errors) {
    fatal(
      e.reason ?? 'InvalidPlan',
      null,
      `MaintenancePlan ${name}: ${e.path}: found ${e.found}; allowed: ${e.allowed}. Fix that field of the plan.`,
    );
  }
  return errors.length > 0 ? null : (plan as unknown as MaintenancePlan);
}

/**
 * The NodePools as Crossplane fetched them. The apiserver has validated them against Karpenter's CRD; we
 * check only what the derivation would otherwise trip over, so a malformed object is a FATAL, not a crash.
 */
function readNodePools(
  supplied: Resources,
  fatal: (r: string, p: string | null, m: string) => void,
): NodePool[] | null {
  const pools: NodePool[] = [];
  let ok = true;
  supplied.items.forEach((item, i) => {
    const obj = item.resource;
    const rawName =
      isObject(obj) && isObject(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : null;
    // Named in messages: cut, so that a megabyte of name cannot make every message that long.
    const name = rawName !== null && rawName.length > 253 ? `${rawName.slice(0, 64)}…` : rawName;
    const bad = (field: string, found: JsonValue | undefined, allowed: string): void => {
      ok = false;
      fatal(
        'InvalidNodePool',
        name,
        `NodePool ${name ?? `#${i + 1}`} (required resource ${NODEPOOLS}): ${field}: found ${shown(found)}; ` +
          `allowed: ${allowed}.`,
      );
    };
    if (!isObject(obj) || obj.apiVersion !== 'karpenter.sh/v1' || obj.kind !== 'NodePool') {
      bad(
        'apiVersion/kind',
        isObject(obj) ? { apiVersion: obj.apiVersion ?? null, kind: obj.kind ?? null } : obj,
        'karpenter.sh/v1 NodePool',
      );
      return;
    }
    if (rawName === null || rawName === '' || rawName !== name)
      return bad('metadata.name', isObject(obj.metadata) ? obj.metadata.name : undefined, 'a name of 1–253 characters');
    const labels = (obj.metadata as JsonObject).labels;
    if (labels !== undefined && !(isObject(labels) && Object.values(labels).every((v) => typeof v === 'string'))) {
      return bad('metadata.labels', labels, 'a map of strings');
    }
    const template = isObject(obj.spec) && isObject(obj.spec.template) ? obj.spec.template.spec : undefined;
    if (!isObject(template)) return bad('spec.template.spec', template, 'a NodePool template (karpenter.sh/v1)');
    const durations: [string, (t: string) => unknown, string][] = [
      ['expireAfter', parseExpireAfter, 'a duration such as 336h, or Never'],
      ['terminationGracePeriod', parseDuration, 'a Go duration such as 1h'],
    ];
    for (const [field, parse, allowed] of durations) {
      const v = template[field];
      if (v === undefined) continue;
      try {
        if (typeof v !== 'string') throw new TypeError();
        parse(v);
      } catch {
        return bad(`spec.template.spec.${field}`, v, allowed);
      }
    }
    pools.push(obj as unknown as NodePool);
  });
  return ok ? pools : null;
}

/**
 * The plan field a finding is about: the deciding rule's override when it sets that field (or a parent of
 * it), otherwise spec.defaults, where the value came from or where to set it (planOrigin, shared with
 * explain). Findings about the NodePool itself (its expireAfter, terminationGracePeriod) keep their NodePool
 * path.
 */
function planField(plan: MaintenancePlan, ruleIndex: number, f: Finding): string {
  // "NodePool <name> spec.template.spec.expireAfter": the NodePool is already named in the message.
  if (!f.field.startsWith('spec.')) return fieldLabel(f.field);
  return planOrigin(plan, ruleIndex, f.field);
}

/** The policy with the figure annotations, every object's keys sorted (expandPlan already sorted the spec). */
function annotate(policy: RotationPolicy, figures: Figures, rule: string | null): RotationPolicy {
  const annotations: Record<string, string> = { ...(policy.metadata.annotations ?? {}) };
  for (const [name, value] of Object.entries(figureValues(figures)))
    annotations[FIGURE_ANNOTATIONS[name as keyof FigureValues]] = String(value);
  if (rule !== null) annotations[RULE_ANNOTATION] = rule;
  const { apiVersion, kind, metadata, spec } = policy;
  return {
    apiVersion,
    kind,
    metadata: sortKeys({ ...metadata, annotations }) as RotationPolicy['metadata'],
    spec,
  };
}

function summary(
  nodePool: string,
  policy: RotationPolicy,
  rule: string | null,
  f: Figures,
  findings: Finding[],
): NodePoolSummary {
  const out: NodePoolSummary = { name: nodePool, policy: policy.metadata.name };
  if (rule !== null) out.rule = rule;
  // The plan's status carries the figures a reviewer checks first; the policies' annotations carry them all.
  const figures = figureValues(f);
  for (const key of ['windowPeriod', 'ageThreshold', 'leadTime', 'guaranteedChances', 'capacityPerOccurrence'] as const)
    if (figures[key] !== undefined) Object.assign(out, { [key]: figures[key] });
  // Reasons only: messages go to results and events; 1000 NodePools of messages would bloat the XR.
  const warnings = findings.filter((x) => x.severity === 'warning').map((x) => x.reason);
  if (warnings.length > 0) out.warnings = warnings;
  return out;
}

/** The desired XR: what earlier steps desired, with status.nodePools set (Crossplane owns status.conditions). */
function compositeWithStatus(req: RunFunctionRequest, summaries: NodePoolSummary[]): Resource {
  const previous = req.desired?.composite;
  const body: JsonObject = { ...(previous?.resource ?? {}) };
  const observed: JsonObject = req.observed?.composite?.resource ?? {};
  // The SDKs' convention: the desired XR names its type, so it can be applied on its own.
  if (body.apiVersion === undefined && observed.apiVersion !== undefined) body.apiVersion = observed.apiVersion;
  if (body.kind === undefined && observed.kind !== undefined) body.kind = observed.kind;
  body.status = { ...(isObject(body.status) ? body.status : {}), nodePools: sortKeys(summaries) as JsonValue };
  return {
    resource: sortKeys(body) as JsonObject,
    connectionDetails: previous?.connectionDetails ?? {},
    ready: previous?.ready ?? Ready.READY_UNSPECIFIED,
  };
}
