// The terminal form of `explain`: one aligned row per NodePool, then each finding with its fix.
import { alignColumns } from '../util/columns.js';
import { formatHuman } from '../util/duration.js';
import type { ExplainResult, NodePoolReport } from './explain.js';

const dur = (s: number | null): string => (s === null ? '-' : formatHuman(s));
const num = (n: number | null): string => (n === null ? '-' : String(n));

export function renderTable(report: ExplainResult['report'], excluded: ExplainResult['excluded'] = []): string {
  const exclusion = new Map(excluded.map((x) => [x.nodePool, `excluded by ${x.plan}/${x.rule}`]));
  const header = [
    'NODEPOOL',
    'POLICY',
    'PERIOD(P)',
    't_rot',
    'LEAD',
    'AGE-THRESHOLD(A)',
    'CHANCES(G)',
    't_rot_est',
    'CAPACITY(C)',
    'FINDINGS',
  ];
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
      out.push(`  ${f.severity === 'fatal' ? 'FATAL  ' : 'WARNING'} ${f.reason}: ${f.message}`);
  }
  return `${out.join('\n')}\n`;
}

function summary(p: NodePoolReport): string {
  if (p.policy === null && p.findings.length === 0) return 'not governed';
  const fatal = p.findings.filter((f) => f.severity === 'fatal').length;
  const warn = p.findings.length - fatal;
  const parts: string[] = [];
  if (fatal) parts.push(`${fatal} fatal`);
  if (warn) parts.push(`${warn} warning${warn === 1 ? '' : 's'}`);
  return parts.length ? parts.join(', ') : 'ok';
}
