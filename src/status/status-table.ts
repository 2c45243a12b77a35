// The terminal form of `noderotation status`: one aligned row per NodePool; `wide` adds the surge node, the
// times in the user's zone and what the controller last reported. Times are shown in the window's own zone
// (as the platform team wrote the window) with how far away they are.
import { DateTime } from 'luxon';
import { alignColumns } from '../util/columns.js';
import { formatDuration } from '../util/duration.js';
import type { PoolStatus } from './fleet-status.js';
import { severityLabel } from '../util/severity-label.js';

export interface TableOptions {
  now: number;
  /** The user's zone (IANA), for the wide columns. */
  userZone: string;
  wide: boolean;
}

/** `Sat 02:00 Asia/Tokyo`; in `zone` when given, else UTC. */
export function wallTime(iso: string, zone: string | null): string {
  const z = zone ?? 'UTC';
  return `${DateTime.fromISO(iso, { zone: z }).toFormat('ccc yyyy-LL-dd HH:mm')} ${z}`;
}

/** Whole seconds from `iso` to `now` (positive: in the past). */
const secondsSince = (iso: string, now: number): number => Math.round((now - Date.parse(iso)) / 1000);

const relative = (iso: string, now: number): string => {
  const ago = secondsSince(iso, now);
  return ago <= 0 ? `in ${formatDuration(-ago)}` : `${formatDuration(ago)} ago`;
};

function window(p: PoolStatus, now: number): string {
  if (p.policy === null) return '-';
  if (p.windowOpen)
    return p.windowClosesAt ? `open until ${wallTime(p.windowClosesAt, p.windowZone)}` : 'open (no end within 16d)';
  return p.windowOpensAt
    ? `opens ${wallTime(p.windowOpensAt, p.windowZone)} (${relative(p.windowOpensAt, now)})`
    : 'closed (no opening within 16d)';
}

function rotation(p: PoolStatus, now: number): string {
  const r = p.rotation;
  if (!r) return '-';
  const mode = r.mode === 'forceful-fallback' ? ' forceful' : '';
  const since = r.since ? ` for ${formatDuration(Math.max(0, secondsSince(r.since, now)))}` : '';
  return `${r.nodeClaim} ${r.phase}${mode}${since}`;
}

function notes(p: PoolStatus): string {
  const out: string[] = [];
  if (p.governance === 'conflict') out.push(`conflict: ${p.conflictingPolicies.join(', ')}`);
  if (p.frozenUntil) out.push(`frozen until ${p.frozenUntil}`);
  for (const f of p.findings) out.push(`${severityLabel(f.severity)} ${f.reason}`);
  return out.join('; ') || '-';
}

/** `next a Sat 2027-01-09 02:00 Asia/Tokyo, min margin 53h43m, 0 at risk`: the first planned rotation and the risk. */
function forecastCell(p: PoolStatus): string {
  const f = p.forecast;
  if (!f) return '-';
  const out: string[] = [];
  const first = f.next[0];
  if (first) out.push(`next ${first.nodeClaim} ${wallTime(first.plannedStart, p.windowZone)}`);
  if (f.minMarginSeconds !== null) out.push(`min margin ${formatDuration(f.minMarginSeconds)}`);
  out.push(`${f.atRisk} at risk`);
  return out.join(', ');
}

export function renderStatus(pools: readonly PoolStatus[], o: TableOptions): string {
  const header = ['NODEPOOL', 'POLICY', 'WINDOW', 'CANDIDATES', 'ROTATION', 'LAST-SUCCESS', 'LAST-FAILURE', 'NOTES'];
  if (o.wide) header.push('SURGE-NODE', `NEXT-CHANGE(${o.userZone})`, 'FORECAST', 'CONTROLLER');
  const rows = pools.map((p) => {
    const row = [
      p.nodePool,
      p.policy ?? (p.governance === 'conflict' ? '(conflict)' : '(none)'),
      window(p, o.now),
      p.policy === null ? '-' : `${p.candidates} now, ${p.candidatesNextWindow ?? '-'} next`,
      rotation(p, o.now),
      p.lastSuccess ? relative(p.lastSuccess, o.now) : '-',
      p.lastFailure ? relative(p.lastFailure, o.now) : '-',
      notes(p),
    ];
    if (o.wide) {
      const change = p.windowOpen ? p.windowClosesAt : p.windowOpensAt;
      const ready = p.controller?.ready;
      row.push(
        p.rotation?.surgeNode ?? '-',
        change && p.policy !== null ? wallTime(change, o.userZone) : '-',
        forecastCell(p),
        ready ? `${ready.reason}${p.controller?.waiting ? `: ${p.controller.waiting}` : ''}` : '-',
      );
    }
    return row;
  });
  return `${alignColumns(header, rows).join('\n')}\n`;
}
