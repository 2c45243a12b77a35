// The soak's result as text: the criteria with their verdicts, the figures per pool, the anatomy of the
// rotations, the chaos timeline and the full ledger. Pure: the same records give the same text.
import { alignColumns } from '../../src/util/columns.js';
import { medianMax } from '../controller/measure.js';
import type { Criterion, Rotation, SoakRecords } from './ledger.js';

const iso = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
const s1 = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(1));

function spread(xs: readonly (number | undefined)[]): string {
  const v = xs.filter((x): x is number => x !== undefined && Number.isFinite(x));
  if (v.length === 0) return '—';
  return `median ${s1(medianMax(v).median)} s (${s1(Math.min(...v))}–${s1(Math.max(...v))}, n=${v.length})`;
}

const table = (head: string[], rows: string[][]): string => alignColumns(head, rows).join('\n');

/** The pools' figures and what each rotated: one table for the summary and the report. */
export function poolTable(r: SoakRecords, rots: readonly Rotation[]): [string[], string[][]] {
  const head = ['pool', 'role', 'P', 't_rot', 'lead time', 'A', 'G', 'completed', 'rolled back', 'fallbacks'];
  const rows = r.pools.map((p) => {
    const mine = rots.filter((x) => x.pool === p.name);
    return [
      p.name,
      p.role,
      `${p.periodS} s`,
      `${p.rotationBoundS} s`,
      `${p.leadTimeS} s`,
      `${p.ageThresholdS} s`,
      String(p.chances),
      String(mine.filter((x) => x.outcome === 'completed').length),
      String(mine.filter((x) => x.outcome === 'rolled back').length),
      String(mine.filter((x) => x.mode === 'forceful-fallback').length),
    ];
  });
  return [head, rows];
}

/** The full ledger, one row per rotation; `start` writes its start time. */
export function ledgerTable(rots: readonly Rotation[], start: (ms: number) => string): [string[], string[][]] {
  const head = ['start', 'pool', 'claim', 'age at start', 'mode', 'outcome', 'surge wait', 'drain', 'total', 'margin'];
  const rows = rots.map((x) => [
    start(x.start),
    x.pool,
    x.claim,
    `${s1(x.ageAtStartS)} s`,
    x.mode,
    x.outcome,
    s1(x.surgeWaitS),
    s1(x.drainS),
    s1(x.totalS),
    s1(x.marginS),
  ]);
  return [head, rows];
}

export function renderSummary(r: SoakRecords, rots: readonly Rotation[], verdicts: readonly Criterion[]): string {
  const minutes = (r.tEnd - r.t0) / 60_000;
  const passed = verdicts.filter((v) => v.pass).length;
  const graceful = rots.filter((x) => x.mode === 'surge' && x.outcome === 'completed');
  const out: string[] = [];
  out.push(
    `soak ${new Date(r.t0).toISOString()} → ${new Date(r.tEnd).toISOString()} (${minutes.toFixed(1)} min): ` +
      `${passed}/${verdicts.length} criteria passed, ${rots.length} rotations, ${r.chaos.length} faults`,
    '',
    table(
      ['#', 'criterion', 'verdict', 'observed'],
      verdicts.map((v, i) => [String(i + 1), v.title, v.pass ? 'PASS' : 'FAIL', v.observed]),
    ),
    '',
    table(...poolTable(r, rots)),
    '',
    'anatomy of the completed surge rotations:',
    `  surge wait ${spread(graceful.map((x) => x.surgeWaitS))}`,
    `  drain      ${spread(rots.filter((x) => x.outcome === 'completed').map((x) => x.drainS))}`,
    `  total      ${spread(rots.filter((x) => x.outcome === 'completed').map((x) => x.totalS))}`,
    `  margin     ${spread(graceful.map((x) => x.marginS))}`,
    '',
    'chaos:',
    ...(r.chaos.length
      ? r.chaos.map(
          (c) =>
            `  ${iso(c.start)}–${iso(c.end)} ${c.kind}: ${c.detail}; steady ${
              c.steadyAt === undefined ? 'not within the bound' : `after ${s1((c.steadyAt - c.end) / 1000)} s`
            }`,
        )
      : ['  none']),
    '',
    'ledger:',
    table(...ledgerTable(rots, (ms) => iso(ms))),
    '',
  );
  return out.join('\n');
}
