// Window figures memoised by (calendar start, windows). Taking P, D and gap over a year of the real calendar
// costs milliseconds per window set, while the function (every Crossplane poll), the engine (every pass) and
// explain (every NodePool of a plan) ask again and again for the same windows from the same calendar start
// (a UTC day). The result is a pure function of the key, so caching cannot change any output.
import type { MaintenanceWindow } from '../generated/api-types.js';
import { boundedCache } from '../util/bounded-cache.js';
import { canonicalJson } from '../util/canonical.js';
import { windowFigures, type WindowFigures } from './windows.js';

export type FiguresFor = (windows: readonly MaintenanceWindow[]) => WindowFigures;

export interface FiguresCache {
  /** The figures function for one calendar start, as analysePool takes it. */
  at(calendarStart: number): FiguresFor;
  readonly size: number;
}

/** A bounded cache: past `max` entries the least recently used is dropped (a plan's windows rarely change). */
export function figuresCache(max = 512): FiguresCache {
  const entries = boundedCache<string, WindowFigures>(max);
  return {
    at(calendarStart) {
      // windowFigures throws for an unknown zone; nothing is cached then and the caller reports it.
      return (windows) =>
        entries.get(`${calendarStart} ${canonicalJson(windows)}`, () => windowFigures(windows, calendarStart));
    },
    get size() {
      return entries.size;
    },
  };
}
