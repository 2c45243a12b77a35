// Recurring freezes (spec.recurringFreezes) against the figures, over the year ahead of `now`:
//  - FreezeOutlastsNodes, per recurring freeze: an occurrence longer than D = E − A − t_rot (freezes.ts says why
//    D is the bound), with the fix that shortens the freeze itself (its `to`, or an RRULE's `duration`);
//  - FreezeCutsChances: a node whose candidacy span [s, s + D) overlaps window time an occurrence covers is
//    left fewer than K windows to be rotated in, counting only windows with some instant outside every freeze
//    (the one-off freezes and every recurring occurrence: the engine starts nothing during any of them); a freeze
//    that covers no window time is never blamed for what the others do. G = floor(D / P)
//    guarantees K windows on the calendar alone; a freeze takes away the ones it covers whole. The fix lowers
//    the age threshold until every such span keeps K (the smallest A that does, if one exists).
// Pure: `now` is injected, occurrences come from schedule/recurring-freezes.ts and the windows from occurrences().
import { parseTime } from '../engine/annotations.js';
import type { Freeze, RecurringFreeze } from '../generated/api-types.js';
import { freezeOccurrences, type FreezeOccurrence } from '../schedule/recurring-freezes.js';
import { occurrences, type Interval } from '../schedule/windows.js';
import { formatDuration as h } from '../util/duration.js';
import { finding, type Finding, type Fix } from './findings.js';
import { utcTime, type FreezeTerms } from './freezes.js';
import type { PolicyParams } from './params.js';

const DAY_S = 86_400;
const YEAR_MS = 365 * DAY_S * 1000;

/** Sorted, merged (touching joined) half-open intervals. */
function merge(spans: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}

/** The parts of `w` outside the merged freezes `frozen`. */
function openParts(w: Interval, frozen: readonly Interval[]): Interval[] {
  let parts: Interval[] = [w];
  for (const f of frozen) {
    if (f.end <= w.start || f.start >= w.end) continue;
    parts = parts.flatMap((p) => {
      const keep: Interval[] = [];
      if (f.start > p.start) keep.push({ start: p.start, end: Math.min(f.start, p.end) });
      if (f.end < p.end) keep.push({ start: Math.max(f.end, p.start), end: p.end });
      return keep.filter((k) => k.end > k.start);
    });
  }
  return parts;
}

/** Each window occurrence's open parts (non-empty only), in window order. */
type OpenWindows = Interval[][];

/** How many windows have an open instant in [s, s + D). */
function chancesIn(open: OpenWindows, s: number, Dms: number): number {
  return open.filter((parts) => parts.some((p) => p.start < s + Dms && s < p.end)).length;
}

/** The fewest chances left to a span [s, s + D) overlapping `o`, and the s that has them. */
function fewest(open: OpenWindows, o: Interval, Dms: number): { chances: number; at: number } {
  // c(s) only falls where an open part leaves the span (s = its end): those and the first overlapping s.
  const first = o.start - Dms + 1;
  const candidates = [first, ...open.flat().map((p) => p.end)].filter((s) => s >= first && s < o.end);
  let best = { chances: Infinity, at: first };
  for (const s of candidates) {
    const c = chancesIn(open, s, Dms);
    if (c < best.chances || (c === best.chances && s < best.at)) best = { chances: c, at: s };
  }
  return best;
}

interface Calendar {
  occ: { freeze: number; o: FreezeOccurrence }[];
  frozen: Interval[];
}

/** The recurring occurrences of the year ahead (read to one more D for the spans that reach past it). */
function calendar(freezes: readonly Freeze[], recurring: readonly RecurringFreeze[], now: number, Dms: number) {
  const until = now + YEAR_MS + Dms;
  const occ = recurring.flatMap((f, freeze) => freezeOccurrences(f, now, now + YEAR_MS).map((o) => ({ freeze, o })));
  const all = recurring.flatMap((f) => freezeOccurrences(f, now - Dms, until));
  const oneOff = freezes.flatMap((f) => {
    const start = parseTime(f.start);
    const end = parseTime(f.end);
    return start !== null && end !== null && end > start ? [{ start, end }] : [];
  });
  return { occ, frozen: merge([...all, ...oneOff]) } satisfies Calendar;
}

function openWindows(p: PolicyParams, frozen: readonly Interval[], from: number, to: number): OpenWindows {
  return occurrences(p.windows, from, to)
    .map((w) => openParts(w, frozen))
    .filter((parts) => parts.length > 0);
}

/**
 * The window time an occurrence takes away: from the start of the first window part it covers to the end of the
 * last; null when it covers none (a freeze between the windows).
 */
function cutOf(windows: readonly Interval[], o: Interval): Interval | null {
  const cut = windows.filter((w) => w.start < o.end && o.start < w.end);
  if (cut.length === 0) return null;
  return {
    start: Math.max(o.start, Math.min(...cut.map((w) => w.start))),
    end: Math.min(o.end, Math.max(...cut.map((w) => w.end))),
  };
}

/**
 * Every occurrence's fewest chances under D (seconds); the worst per freeze, in freeze order. With `blame`, only
 * the spans whose windows the occurrence itself cuts are its own: a freeze between the windows is not blamed for
 * a span another freeze leaves short, and one that cuts none is left out (FreezeCutsChances names the freezes
 * that take window time).
 */
function worst(p: PolicyParams, cal: Calendar, now: number, D: number, blame = false) {
  const Dms = D * 1000;
  const [from, to] = [now - Dms, now + YEAR_MS + 2 * Dms];
  const open = openWindows(p, cal.frozen, from, to);
  const windows = blame ? occurrences(p.windows, from, to) : [];
  const byFreeze = new Map<number, { o: FreezeOccurrence; chances: number; at: number }>();
  for (const { freeze, o } of cal.occ) {
    const spans = blame ? cutOf(windows, o) : o;
    if (spans === null) continue;
    const f = fewest(open, spans, Dms);
    const seen = byFreeze.get(freeze);
    if (!seen || f.chances < seen.chances) byFreeze.set(freeze, { o, ...f });
  }
  return [...byFreeze.entries()].sort((a, b) => a[0] - b[0]);
}

/** The day of a non-leap year (1 = Jan 1) of "MM-DD", 02-29 taken as 02-28; and back, past Dec 31 into January. */
const dayOfYear = (md: string): number => {
  const [m, d] = md.split('-').map(Number) as [number, number];
  return (Date.UTC(2027, m - 1, Math.min(d, m === 2 ? 28 : d)) - Date.UTC(2027, 0, 0)) / (DAY_S * 1000);
};
const monthDay = (day: number): string => {
  const t = new Date(Date.UTC(2027, 0, day));
  return `${String(t.getUTCMonth() + 1).padStart(2, '0')}-${String(t.getUTCDate()).padStart(2, '0')}`;
};
const FEB_28 = 59;

/**
 * The change to the freeze itself that makes every occurrence at most D long, when there is one: an RRULE's
 * duration D, or a `to` that keeps n local days (a day taken as 25 hours for DST; a yearly range over the end
 * of February keeps one day less, for 02-29).
 */
function shorten(f: RecurringFreeze, field: string, D: number): Fix | null {
  if (f.rrule !== undefined) return { object: 'RotationPolicy', path: `${field}.duration`, value: h(Math.floor(D)) };
  const n = Math.min(365, Math.floor(D / (DAY_S + 3600)));
  if (f.yearly) {
    const first = dayOfYear(f.yearly.from);
    const crosses = (keep: number): boolean => {
      const last = first + keep - 1;
      return (first <= FEB_28 && last > FEB_28) || last > FEB_28 + 365;
    };
    const keep = crosses(n) ? n - 1 : n;
    return keep >= 1
      ? { object: 'RotationPolicy', path: `${field}.yearly.to`, value: monthDay(first + keep - 1) }
      : null;
  }
  if (f.monthly && n >= 1) {
    const from = f.monthly.from;
    const to = from > 0 ? (from + n - 1 <= 28 ? from + n - 1 : from) : Math.min(-1, from + n - 1);
    return { object: 'RotationPolicy', path: `${field}.monthly.to`, value: to };
  }
  return null;
}

const when = (o: Interval): string => `${utcTime(o.start)} to ${utcTime(o.end)}`;

/**
 * FreezeOutlastsNodes per recurring freeze and FreezeCutsChances, over the year ahead. Nothing is checked when
 * the pool has no deadline or no guaranteed window (other findings say why).
 */
export function recurringFreezeFindings(p: PolicyParams, t: FreezeTerms, now: number): Finding[] {
  const { E, A, G } = t;
  if (p.recurringFreezes.length === 0 || E === null || A === null || G === null || G < 1) return [];
  const D = E - A - t.tRot;
  const cal = calendar(p.freezes, p.recurringFreezes, now, D * 1000);
  const out: Finding[] = [];
  p.recurringFreezes.forEach((f, i) => {
    const longest = cal.occ
      .filter((x) => x.freeze === i)
      .reduce<FreezeOccurrence | null>((a, x) => (a && a.end - a.start >= x.o.end - x.o.start ? a : x.o), null);
    if (!longest) return;
    const L = (longest.end - longest.start) / 1000;
    if (!(L > D)) return;
    const field = `spec.recurringFreezes[${i}]`;
    const fix = shorten(f, field, D);
    const advice = fix
      ? `Set ${fix.path.slice(field.length + 1)} to ${String(fix.value)}`
      : 'Shorten it to at most that';
    out.push(
      finding(
        'FreezeOutlastsNodes',
        field,
        `${field} (${JSON.stringify(f.name)}) lasts ${h(L)} at its longest in the year ahead (${when(longest)}), ` +
          `longer than the ${h(D)} a node of this NodePool has from becoming a candidate to the last rotation ` +
          `start that finishes before expireAfter (E − A − t_rot = ${h(E)} − ${h(A)} − ${h(t.tRot)}), so nodes ` +
          `that become candidates as it begins get no window before Karpenter expires them. ${advice}.`,
        fix ?? undefined,
      ),
    );
  });
  const short = worst(p, cal, now, D, true).filter(([, w]) => w.chances < t.K);
  if (short.length === 0) return out;
  const fix = lowerAgeThreshold(p, cal, now, t, D);
  for (const [i, w] of short) {
    const f = p.recurringFreezes[i] as RecurringFreeze;
    const field = `spec.recurringFreezes[${i}]`;
    out.push(
      finding(
        'FreezeCutsChances',
        field,
        `${field} (${JSON.stringify(f.name)}), in its occurrence ${when(w.o)}, leaves a node that becomes a ` +
          `candidate at ${utcTime(w.at)} ${w.chances} window(s) outside freezes in the ${h(D)} from then to its last ` +
          `rotation start (E − A − t_rot), fewer than minRotationChances (${t.K}). ` +
          (fix
            ? `Set ageThreshold to ${String(fix.value)} (every node then has at least ${t.K} window(s) outside ` +
              'freezes), or shorten the freeze.'
            : 'Shorten the freeze, or give the NodePool more windows.'),
        fix ?? undefined,
      ),
    );
  }
  return out;
}

/** The largest age threshold (a whole hour) under which every span overlapping an occurrence keeps K windows. */
function lowerAgeThreshold(p: PolicyParams, cal: Calendar, now: number, t: FreezeTerms, D: number): Fix | null {
  const E = t.E as number;
  const longest = Math.max(...cal.occ.map((x) => (x.o.end - x.o.start) / 1000));
  for (const extra of [1, 2, 3, 4].map((k) => longest + k * t.P)) {
    const A = Math.floor((E - t.tRot - (D + extra)) / 3600) * 3600;
    if (A < 3600) return null;
    const Dnew = E - A - t.tRot;
    const calNew = calendar(p.freezes, p.recurringFreezes, now, Dnew * 1000);
    if (worst(p, calNew, now, Dnew, true).every(([, w]) => w.chances >= t.K))
      return { object: 'RotationPolicy', path: 'spec.ageThreshold', value: h(A) };
  }
  return null;
}

/**
 * What the recurring freezes take from layer 2 (throughput.ts), over the year ahead: the largest share of window
 * occurrences frozen whole in any span of `spanSeconds` (A, the steady state's period) starting at a window, and
 * the fewest windows outside freezes any candidacy span overlapping an occurrence keeps (the batch's G). Without
 * recurring freezes: nothing taken (share 0, chances null).
 */
export function freezeImpact(
  p: PolicyParams,
  t: FreezeTerms,
  now: number,
  spanSeconds: number | null,
): { frozenShare: number; fewestChances: number | null } {
  const { E, A, G } = t;
  if (p.recurringFreezes.length === 0 || E === null || A === null || G === null || G < 1)
    return { frozenShare: 0, fewestChances: null };
  const D = E - A - t.tRot;
  const cal = calendar(p.freezes, p.recurringFreezes, now, D * 1000);
  const fewestChances = Math.min(...worst(p, cal, now, D).map(([, w]) => w.chances));
  let frozenShare = 0;
  if (spanSeconds !== null && spanSeconds > 0) {
    const span = spanSeconds * 1000;
    const windows = occurrences(p.windows, now, now + YEAR_MS + span);
    const lost = windows.map((w) => (openParts(w, cal.frozen).length === 0 ? 1 : 0));
    let j = 0;
    let frozen = 0;
    for (let i = 0; i < windows.length && (windows[i] as Interval).start < now + YEAR_MS; i++) {
      const end = (windows[i] as Interval).start + span;
      for (; j < windows.length && (windows[j] as Interval).start < end; j++) frozen += lost[j] as number;
      frozenShare = Math.max(frozenShare, frozen / (j - i));
      frozen -= lost[i] as number;
    }
  }
  return { frozenShare, fewestChances: Number.isFinite(fewestChances) ? fewestChances : null };
}
