// GET /calendar.ics on the metrics port: the calendar `noderotation calendar` writes (src/calendar/), built on
// request from the watch caches (the policies, NodePools and NodeClaims the controller already holds), never on a
// reconcile. Pure but for the caches it reads; the clock is the caller's.
import { buildCalendar, DEFAULT_HORIZON_DAYS } from '../src/calendar/calendar.js';
import { calendarModel } from '../src/calendar/world.js';
import type { RotationPolicy } from '../src/generated/api-types.js';
import type { NodeClaim, NodePool } from '../src/karpenter/types.js';

/** What the calendar reads of the caches. */
export interface CalendarCaches {
  policies: { list(): RotationPolicy[] };
  nodePools: { list(): NodePool[] };
  nodeClaims: { list(): NodeClaim[] };
}

/** The calendar of every governed NodePool, with the forecast of the default horizon (35 days). */
export function cachedCalendar(caches: CalendarCaches, now: number): string {
  return buildCalendar(
    calendarModel(
      { policies: caches.policies.list(), nodePools: caches.nodePools.list(), nodeClaims: caches.nodeClaims.list() },
      now,
      { horizonSeconds: DEFAULT_HORIZON_DAYS * 86400 },
    ),
  );
}
