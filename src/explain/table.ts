// The terminal form of `explain`: one aligned row per NodePool, then each finding with its fix.
import { alignColumns } from '../util/columns.js';
import { formatDuration } from '../util/duration.js';
import type { ExplainResult, NodePoolReport } from './explain.js';
import { count } from '../util/plural.js';
import { severityLabel } from '../util/severity-label.js';

const dur = (s: number | null): string => (s === null ? '-' : formatDuration(s));
const num = (n: number | null): string => (n === null ? '-' : String(n));

/**
 * What each column of the table means, in the words of docs/design.md §1.4 (its symbols in brackets); `explain
 * --legend` prints it, and the simulate HTML report shows the same lines.
 */
export const EXPLAIN_LEGEND: readonly (readonly [column: string, meaning: string])[] = [
  ['NODEPOOL', 'the Karpenter NodePool'],
  ['POLICY', 'the RotationPolicy that governs it, or (none)'],
  ['PERIOD(P)', 'the longest wait from one window opening to the next (start to start)'],
  ['t_rot', 'the longest a rotation may take: readyTimeout + terminationGracePeriod + 2m'],
  ['LEAD', 'how long before its forced expiry a node becomes a candidate: K·P + t_rot (K = minRotationChances)'],
  ['AGE-THRESHOLD(A)', 'the age at which a node becomes a candidate: expireAfter − LEAD'],
  ['CHANCES(G)', 'the windows each node is guaranteed before its forced expiry'],
  ['t_rot_est', 'how long a healthy rotation takes: provisioningEstimate + drainEstimate'],
  ['CAPACITY(C)', 'rotations one window occurrence admits (the shortest occurrence)'],
  ['FINDINGS', 'ok, or the count of fatal findings and warnings, listed below the table with their fixes'],
];

/** The legend as aligned lines. */
export function renderLegend(): string {
  const w = Math.max(...EXPLAIN_LEGEND.map(([c]) => c.length));
  return `${EXPLAIN_LEGEND.map(([c, m]) => `${c.padEnd(w)}  ${m}`).join('\n')}\n`;
}

export function renderTable(
  report: ExplainResult['report'],
  excluded: ExplainResult['excluded'] = [],
  o: { colour?: boolean } = {},
): string {
  const exclusion = new Map(excluded.map((x) => [x.nodePool, `excluded by ${x.plan}/${x.rule}`]));
  const header = EXPLAIN_LEGEND.map(([column]) => column);
  const rows = report.nodePools.map((p: NodePoolReport) => [
    p.nodePool,
    p.policy ?? '(none)',
    dur(p.windowPeriodSeconds),
    dur(p.rotationBoundSeconds),
    dur(p.leadTimeSeconds),
    dur(p.ageThresholdSeconds),
    num(p.guaranteedChances),
    dur(p.expectedRotationSeconds),
    num(p.capacityPerOccurrence),
    exclusion.get(p.nodePool) ?? summary(p),
  ]);
  const out = alignColumns(header, rows);
  for (const p of report.nodePools) {
    if (p.findings.length === 0) continue;
    out.push('', `${p.nodePool}:`);
    for (const f of p.findings)
      out.push(`  ${severityLabel(f.severity, { pad: true, colour: o.colour })} ${f.reason}: ${f.message}`);
  }
  return `${out.join('\n')}\n`;
}

function summary(p: NodePoolReport): string {
  if (p.policy === null && p.findings.length === 0) return 'not governed';
  const fatal = p.findings.filter((f) => f.severity === 'fatal').length;
  const warn = p.findings.length - fatal;
  const parts: string[] = [];
  if (fatal) parts.push(`${fatal} fatal`);
  if (warn) parts.push(count(warn, 'warning'));
  return parts.length ? parts.join(', ') : 'ok';
}
