// The calendar people subscribe to (issue 22): the maintenance windows as weekly recurring events in their own
// zones, the freezes, and the forecast's rotations, as an RFC 5545 VCALENDAR. Pure: the model and the clock
// come in, bytes go out, and the same inputs give the same bytes (events sorted, UIDs derived from names,
// DTSTAMP the injected `now`).
//
// Windows (decision): each entry is one VEVENT whose DTSTART and DTEND are wall times with the entry's TZID and
// whose RRULE names its days, so a calendar shows it in its own zone. An occurrence a parser cannot derive from
// the rule alone is given as an override (RECURRENCE-ID) with its instants in UTC:
//  - an opening wall time that a spring-forward transition skips or a fall-back one repeats (RFC 5545 section
//    3.3.5 settles both, but parsers differ: ical.js reads a skipped time with the offset after the gap);
//  - an occurrence whose length differs from the rule's, which is exact (RFC 5545 section 3.8.5.3: DTEND gives
//    every member the same exact duration), while the window closes at a wall time: 22:00–04:00 lasts 5 h on a
//    spring-forward night.
// The rule ends (UNTIL) with the span the VTIMEZONEs cover (vtimezone.ts), so no instant in the calendar rests on
// an offset it does not state; a subscription is fetched again long before then.
import type { MaintenanceWindow } from '../generated/api-types.js';
import type { ClaimForecast } from '../forecast/forecast.js';
import { rfc3339 } from '../engine/annotations.js';
import { formatDuration } from '../util/duration.js';
import { DAYS, entryMinutes, entryOccurrences, type EntryOccurrence } from '../schedule/windows.js';
import { wallInstants } from '../schedule/zone.js';
import { escapeText, localTime, serialize, utcTime } from './ics.js';
import { vtimezone } from './vtimezone.js';

const DAY_MS = 86_400_000;

/** A freeze's concrete occurrence: a half-open interval (epoch ms), where it is declared, and why. */
export interface FreezeOccurrence {
  start: number;
  end: number;
  name: string;
  reason: string;
}

/**
 * The freezes of a NodePool that overlap [from, to), as concrete occurrences: one-off spans as they are, and a
 * recurring freeze expanded (its expansion is wired in here).
 */
export type FreezeSource = (from: number, to: number) => FreezeOccurrence[];

/** One governed NodePool as the calendar sees it. */
export interface CalendarPool {
  nodePool: string;
  /** The RotationPolicy governing it (a MaintenancePlan's generated one included). */
  policy: string;
  /** The policy's spec.maintenanceWindows. */
  windows: readonly MaintenanceWindow[];
  freezes: FreezeSource;
  /** The forecast per claim; null when unknown (no NodeClaims given, or no figures). */
  forecast: readonly ClaimForecast[] | null;
}

export interface CalendarModel {
  pools: readonly CalendarPool[];
  /** The clock: the DTSTAMP of every event, and where the spans below are measured from (epoch ms). */
  now: number;
  /** How far ahead the forecast's events go (seconds). */
  horizonSeconds: number;
}

/** How far back the calendar starts: the past week, so an open window and a running freeze are in it. */
export const PAST_DAYS = 7;
/** How far ahead windows recur and freezes are listed (at least; longer when the horizon is). */
export const SPAN_DAYS = 366;
/** The default horizon of the forecast's events. */
export const DEFAULT_HORIZON_DAYS = 35;

const PRODID = '-//noderotation.io//noderotation calendar//EN';
const DOMAIN = 'noderotation.io';

/** A UID from names: characters outside [A-Za-z0-9.-] written as _hex_, so distinct names stay distinct. */
const uidPart = (s: string): string => s.replace(/[^A-Za-z0-9.-]/g, (c) => `_${c.codePointAt(0)?.toString(16)}_`);
const uid = (...parts: string[]): string => `${parts.map(uidPart).join('.')}@${DOMAIN}`;

const list = (names: readonly string[]): string =>
  `${names.length === 1 ? 'NodePool' : 'NodePools'} ${[...names].sort().join(', ')}`;

interface Event {
  /** Sort keys: the section, then the start, then the UID, then the override's place. */
  section: number;
  start: number;
  uid: string;
  recurrence: string;
  lines: string[];
}

/** An event: its UID and DTSTAMP, then `body`; every event is transparent (it does not make anyone busy). */
function vevent(
  e: { section: number; start: number; uid: string; recurrence?: string; stamp: string },
  body: readonly string[],
): Event {
  const recurrence = e.recurrence ?? '';
  return {
    section: e.section,
    start: e.start,
    uid: e.uid,
    recurrence,
    lines: [`UID:${escapeText(e.uid)}`, e.stamp, ...(recurrence ? [recurrence] : []), ...body, 'TRANSP:TRANSPARENT'],
  };
}

const BYDAY: Record<string, string> = { Mon: 'MO', Tue: 'TU', Wed: 'WE', Thu: 'TH', Fri: 'FR', Sat: 'SA', Sun: 'SU' };

const hhmm = (min: number): string =>
  `${String(Math.floor(min / 60) % 24).padStart(2, '0')}:${String(min % 60).padStart(2, '0')}`;

/** The calendar of the model, as its bytes (CRLF, folded). */
/** Where the calendar's span ends (epoch ms): a year ahead, or the forecast's horizon when that is later. */
export const calendarUntil = (now: number, horizonSeconds: number): number =>
  Math.max(now + SPAN_DAYS * DAY_MS, now + horizonSeconds * 1000);

export function buildCalendar(model: CalendarModel): string {
  const { now } = model;
  const stamp = `DTSTAMP:${utcTime(Math.floor(now / 1000) * 1000)}`;
  const from = now - PAST_DAYS * DAY_MS;
  const horizonEnd = now + model.horizonSeconds * 1000;
  const until = calendarUntil(now, model.horizonSeconds);
  const events: Event[] = [];
  const zones = new Set<string>();

  // Windows: one recurring event per entry of each governing policy, naming the NodePools it governs here.
  const byPolicy = new Map<string, { windows: readonly MaintenanceWindow[]; pools: string[] }>();
  for (const p of model.pools) {
    const entry = byPolicy.get(p.policy) ?? { windows: p.windows, pools: [] };
    entry.pools.push(p.nodePool);
    byPolicy.set(p.policy, entry);
  }
  for (const [policy, { windows, pools }] of byPolicy) {
    windows.forEach((w, index) => {
      const made = windowEvents(w, { policy, index, pools, from, until, stamp });
      if (made.length > 0) zones.add(w.timezone);
      events.push(...made);
    });
  }

  // Freezes: concrete occurrences in UTC; one occurrence shared by several NodePools is one event naming them.
  const freezes = new Map<string, { f: FreezeOccurrence; pools: string[] }>();
  for (const p of model.pools) {
    for (const f of p.freezes(from, until)) {
      if (!(f.end > from && f.start < until && f.end > f.start)) continue;
      const key = JSON.stringify([f.start, f.end, f.name, f.reason]);
      const entry = freezes.get(key) ?? { f, pools: [] };
      entry.pools.push(p.nodePool);
      freezes.set(key, entry);
    }
  }
  for (const { f, pools } of freezes.values()) {
    const id = uid('freeze', f.name, utcTime(f.start));
    events.push(
      vevent({ section: 1, start: f.start, uid: id, stamp }, [
        `DTSTART:${utcTime(f.start)}`,
        `DTEND:${utcTime(f.end)}`,
        `SUMMARY:${escapeText(`Freeze: ${list(pools)} (${f.name})`)}`,
        `DESCRIPTION:${escapeText(
          `No rotation starts in ${list(pools)} from ${rfc3339(f.start)} until ${rfc3339(f.end)}. ` +
            `Declared by ${f.name}${f.reason ? `; reason: ${f.reason}` : ''}.`,
        )}`,
        'CATEGORIES:noderotation,freeze',
      ]),
    );
  }

  // The forecast: each planned rotation as its planned window, each claim at risk at its forced deadline.
  for (const p of model.pools) {
    for (const f of p.forecast ?? []) {
      const claim = `NodeClaim ${f.nodeClaim} (NodePool ${p.nodePool})`;
      const deadline = f.deadline === null ? 'none (expireAfter: Never)' : rfc3339(ceilSecond(f.deadline));
      const margin = f.marginSeconds === null ? '' : `; margin ${formatDuration(Math.floor(f.marginSeconds))}`;
      if (f.plannedWindow && f.plannedStart !== null && f.plannedStart <= horizonEnd) {
        const id = uid('rotation', p.nodePool, f.nodeClaim);
        events.push(
          vevent({ section: 2, start: f.plannedWindow.start, uid: id, stamp }, [
            `DTSTART:${utcTime(f.plannedWindow.start)}`,
            `DTEND:${utcTime(f.plannedWindow.end)}`,
            `SUMMARY:${escapeText(`Rotation: ${claim}${f.atRisk ? ' (at risk)' : ''}`)}`,
            `DESCRIPTION:${escapeText(
              `Planned to start at ${rfc3339(ceilSecond(f.plannedStart))} in this window (RotationPolicy ` +
                `${p.policy}); forced expiry at ${deadline}${margin}.`,
            )}`,
            'CATEGORIES:noderotation,rotation',
          ]),
        );
      }
      if (f.atRisk && f.deadline !== null && f.deadline >= from && f.deadline <= horizonEnd) {
        const id = uid('at-risk', p.nodePool, f.nodeClaim);
        const why = f.plannedStart === null ? 'no rotation is planned before it' : 'its planned rotation ends after it';
        events.push(
          vevent({ section: 3, start: f.deadline, uid: id, stamp }, [
            `DTSTART:${utcTime(f.deadline)}`,
            `SUMMARY:${escapeText(`AT RISK: ${claim} is expired by Karpenter, not rotated`)}`,
            `DESCRIPTION:${escapeText(
              `Karpenter expires ${claim} at its deadline ${deadline} and ${why}${margin}. ` +
                'See noderotation explain for the findings and their fixes.',
            )}`,
            'CATEGORIES:noderotation,at-risk',
            'PRIORITY:1',
          ]),
        );
      }
    }
  }

  // Windows by UID, each rule before its overrides; the other events by start, then UID.
  events.sort(
    (a, b) =>
      a.section - b.section ||
      (a.section === 0 ? cmp(a.uid, b.uid) || cmp(a.recurrence, b.recurrence) : 0) ||
      a.start - b.start ||
      cmp(a.uid, b.uid),
  );
  const timezones = [...zones].sort(cmp).flatMap((z) => vtimezone(z, from - DAY_MS, until + 2 * DAY_MS));
  return serialize([
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    `PRODID:${PRODID}`,
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    'X-WR-CALNAME:noderotation',
    'REFRESH-INTERVAL;VALUE=DURATION:PT1H',
    'X-PUBLISHED-TTL:PT1H',
    ...timezones,
    ...events.flatMap((e) => ['BEGIN:VEVENT', ...e.lines, 'END:VEVENT']),
    'END:VCALENDAR',
  ]);
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const ceilSecond = (ms: number): number => Math.ceil(ms / 1000) * 1000;

/**
 * Whether a parser derives this occurrence from the rule alone: its opening and closing wall times are each one
 * instant (not skipped, not repeated: the rule's first occurrence gives its DTEND as a wall time too) and it
 * lasts the rule's length.
 */
function plain(w: MaintenanceWindow, o: EntryOccurrence, minutes: { startMin: number; endMin: number }): boolean {
  const [y, mo, d] = o.date;
  const unique = (min: number): boolean => wallInstants(w.timezone, y, mo, d, min).valid.length === 1;
  return (
    unique(minutes.startMin) &&
    unique(minutes.endMin) &&
    o.end - o.start === (minutes.endMin - minutes.startMin) * 60_000
  );
}

/** The events of one window entry: its recurring event with overrides, and plain events before the rule starts. */
function windowEvents(
  w: MaintenanceWindow,
  c: { policy: string; index: number; pools: string[]; from: number; until: number; stamp: string },
): Event[] {
  const { startMin, endMin } = entryMinutes(w);
  const all = entryOccurrences(w, c.from, c.until).filter((o) => o.start >= c.from && o.start <= c.until);
  // The rule's length is the wall-clock length, which every occurrence away from a transition has.
  const isPlain = (o: EntryOccurrence): boolean => plain(w, o, { startMin, endMin });
  const firstPlain = all.findIndex(isPlain);
  if (firstPlain < 0) return [];
  const first = all[firstPlain] as EntryOccurrence;
  const id = uid('window', c.policy, String(c.index));
  const days = [...w.days].sort((a, b) => DAYS.indexOf(a) - DAYS.indexOf(b));
  const what =
    `${days.join(', ')} ${hhmm(startMin)}–${hhmm(endMin)} ${w.timezone}, spec.maintenanceWindows[${c.index}] ` +
    `of RotationPolicy ${c.policy}`;
  const summary = `SUMMARY:${escapeText(`Maintenance window: ${list(c.pools)}`)}`;
  const description = (note: string): string =>
    `DESCRIPTION:${escapeText(`Rotations of ${list(c.pools)} may start while this window is open: ${what}.${note}`)}`;
  const category = 'CATEGORIES:noderotation,maintenance-window';
  const tz = `TZID=${w.timezone}`;
  const [y, mo, d] = first.date;
  const events: Event[] = [
    vevent({ section: 0, start: first.start, uid: id, stamp: c.stamp }, [
      `DTSTART;${tz}:${localTime(y, mo, d, startMin)}`,
      `DTEND;${tz}:${localTime(y, mo, d, endMin)}`,
      `RRULE:FREQ=WEEKLY;BYDAY=${days.map((x) => BYDAY[x]).join(',')};UNTIL=${utcTime(c.until)}`,
      summary,
      description(''),
      category,
    ]),
  ];
  all.forEach((o, k) => {
    if (k === firstPlain || (k > firstPlain && isPlain(o))) return;
    const [oy, omo, od] = o.date;
    const opens = localTime(oy, omo, od, startMin);
    // Before the rule's first occurrence: an event of its own; after it, an override of the rule's occurrence.
    const own = k < firstPlain;
    events.push(
      vevent(
        {
          section: 0,
          start: o.start,
          uid: own ? uid('window', c.policy, String(c.index), opens) : id,
          recurrence: own ? '' : `RECURRENCE-ID;${tz}:${opens}`,
          stamp: c.stamp,
        },
        [
          `DTSTART:${utcTime(o.start)}`,
          `DTEND:${utcTime(o.end)}`,
          summary,
          description(' A daylight-saving transition falls in or next to this occurrence: it is given in UTC.'),
          category,
        ],
      ),
    );
  });
  return events;
}
