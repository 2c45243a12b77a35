// The terminal form of `explain`: one aligned row per NodePool, then each finding with its fix.
import type { Figures } from '../derivation/derive.js';
import { alignColumns } from '../util/columns.js';
import { formatDuration } from '../util/duration.js';
import { rfc3339 } from '../engine/annotations.js';
import type { ExplainResult, NodePoolReport } from './explain.js';
import { count } from '../util/plural.js';
import { severityLabel } from '../util/severity-label.js';

const num = (n: number | null): string => (n === null ? '-' : String(n));

/** One column of the table: its header, what it means, and for a derived figure the field it shows. */
export interface LegendEntry {
  column: string;
  meaning: string;
  /** The figure the column shows (a duration for the *Seconds fields, a count otherwise). */
  figure?: keyof Figures;
}

/**
 * What each column of the table means, in the words of docs/design.md §1.4 (its symbols in brackets); `explain
 * --legend` prints it, the table's header is its columns, and the simulate HTML report shows the figures' lines.
 */
export const EXPLAIN_LEGEND: readonly LegendEntry[] = [
  { column: 'NODEPOOL', meaning: 'the Karpenter NodePool' },
  { column: 'POLICY', meaning: 'the RotationPolicy that governs it, or (none)' },
  {
    column: 'PERIOD(P)',
    meaning: 'the longest wait from one window opening to the next (start to start)',
    figure: 'windowPeriodSeconds',
  },
  {
    column: 't_rot',
    meaning: 'the longest a rotation may take: readyTimeout + terminationGracePeriod + 2m',
    figure: 'rotationBoundSeconds',
  },
  {
    column: 'LEAD',
    meaning: 'how long before its forced expiry a node becomes a candidate: K·P + t_rot (K = minRotationChances)',
    figure: 'leadTimeSeconds',
  },
  {
    column: 'AGE-THRESHOLD(A)',
    meaning: 'the age at which a node becomes a candidate: expireAfter − LEAD',
    figure: 'ageThresholdSeconds',
  },
  {
    column: 'CHANCES(G)',
    meaning: 'the windows each node is guaranteed before its forced expiry',
    figure: 'guaranteedChances',
  },
  {
    column: 't_rot_est',
    meaning: 'how long a healthy rotation takes: provisioningEstimate + drainEstimate',
    figure: 'expectedRotationSeconds',
  },
  {
    column: 'CAPACITY(C)',
    meaning: 'rotations one window occurrence admits (the shortest occurrence)',
    figure: 'capacityPerOccurrence',
  },
  {
    column: 'FINDINGS',
    meaning: 'ok, or the count of fatal findings and warnings, listed below the table with their fixes',
  },
];

/** The derived figures' columns, in the table's order (they stand together, between POLICY and FINDINGS). */
export const FIGURE_LEGEND = EXPLAIN_LEGEND.filter(
  (e): e is LegendEntry & { figure: keyof Figures } => e.figure !== undefined,
);

/** A figure as the table prints it: a duration in h/m/s, a count as it is, '-' where there is none. */
export const figureText = (figure: keyof Figures, value: number | null): string =>
  value === null ? '-' : figure.endsWith('Seconds') ? formatDuration(value) : num(value);

/** The legend as aligned lines. */
export function renderLegend(): string {
  const w = Math.max(...EXPLAIN_LEGEND.map((e) => e.column.length));
  return `${EXPLAIN_LEGEND.map((e) => `${e.column.padEnd(w)}  ${e.meaning}`).join('\n')}\n`;
}

export function renderTable(
  report: ExplainResult['report'],
  excluded: ExplainResult['excluded'] = [],
  o: { colour?: boolean } = {},
): string {
  const exclusion = new Map(excluded.map((x) => [x.nodePool, `excluded by ${x.plan}/${x.rule}`]));
  const header = EXPLAIN_LEGEND.map((e) => e.column);
  const rows = report.nodePools.map((p: NodePoolReport) => [
    p.nodePool,
    p.policy ?? '(none)',
    ...FIGURE_LEGEND.map((e) => figureText(e.figure, p[e.figure])),
    exclusion.get(p.nodePool) ?? summary(p),
  ]);
  const out = alignColumns(header, rows);
  for (const p of report.nodePools) {
    const frozen = (p.forecast ?? []).filter((f) => f.deadlineInFreeze !== null && f.deadline !== null);
    if (p.findings.length === 0 && frozen.length === 0) continue;
    out.push('', `${p.nodePool}:`);
    for (const f of p.findings)
      out.push(`  ${severityLabel(f.severity, { pad: true, colour: o.colour })} ${f.reason}: ${f.message}`);
    if (frozen.length > 0) {
      out.push(`  ${count(frozen.length, 'claim')} with a forced deadline inside a freeze:`);
      const lines = frozen.map((f) => [
        `    ${f.nodeClaim}`,
        `deadline ${rfc3339(f.deadline as number)}`,
        `in ${f.deadlineInFreeze as string}`,
      ]);
      const width = (k: number): number => Math.max(...lines.map((l) => (l[k] as string).length));
      out.push(
        ...lines.map((l) => `${(l[0] as string).padEnd(width(0))}  ${(l[1] as string).padEnd(width(1))}  ${l[2]}`),
      );
    }
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
