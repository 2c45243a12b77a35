// What the fleet benchmark reads about a controller process without trusting the controller: memory and CPU
// from /proc, API requests from the apiserver's audit log (cluster.sh with NODEROTATION_AUDIT_USERS), and
// histograms from a Prometheus text exposition.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux for every architecture we run on). */
const TICKS = 100;

export interface ProcSample {
  at: number;
  rssKiB: number;
  hwmKiB: number;
  /** utime + stime, seconds. */
  cpuS: number;
}

export function sampleProc(pid: number): ProcSample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  // Fields after the command name (which may hold spaces) start at the state, field 3; utime and stime are
  // fields 14 and 15.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuS = (Number(rest[11]) + Number(rest[12])) / TICKS;
  return { at: Date.now(), rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM'), cpuS };
}

export interface AuditRequest {
  id: string;
  verb: string;
  resource: string;
  subresource: string;
  name: string;
  code: number;
  /** requestReceivedTimestamp, ms since the epoch (microsecond precision in the log). */
  at: number;
  userAgent: string;
}

/**
 * The requests of one user from the audit log, one per auditID (a watch has a ResponseStarted and, when it
 * ends, a ResponseComplete event; both name the same request).
 */
export function auditRequests(file: string, user: string): AuditRequest[] {
  const seen = new Map<string, AuditRequest>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const e = JSON.parse(line) as {
      auditID: string;
      verb: string;
      user?: { username?: string };
      objectRef?: { resource?: string; subresource?: string; name?: string };
      responseStatus?: { code?: number };
      requestReceivedTimestamp: string;
      userAgent?: string;
    };
    if (e.user?.username !== user) continue;
    const prev = seen.get(e.auditID);
    seen.set(e.auditID, {
      id: e.auditID,
      verb: e.verb,
      resource: e.objectRef?.resource ?? '',
      subresource: e.objectRef?.subresource ?? '',
      name: e.objectRef?.name ?? '',
      code: e.responseStatus?.code ?? prev?.code ?? 0,
      at: Date.parse(e.requestReceivedTimestamp),
      userAgent: e.userAgent ?? '',
    });
  }
  return [...seen.values()].sort((a, b) => a.at - b.at);
}

/** "verb resource[/subresource]" → count, sorted by key. */
export function byVerb(reqs: readonly AuditRequest[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of reqs) {
    const k = `${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

export interface Histogram {
  count: number;
  sum: number;
  /** Cumulative counts by upper bound, ascending, +Inf last. */
  buckets: [number, number][];
}

/** A histogram's samples summed over every series whose labels include `labels`. */
export function histogram(text: string, name: string, labels: Record<string, string> = {}): Histogram {
  const h: Histogram = { count: 0, sum: 0, buckets: [] };
  const le = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith(`${name}_count`)) h.count += value;
    else if (line.startsWith(`${name}_sum`)) h.sum += value;
    else if (line.startsWith(`${name}_bucket`)) {
      const bound = /le="([^"]+)"/.exec(line)?.[1] ?? '+Inf';
      const b = bound === '+Inf' ? Infinity : Number(bound);
      le.set(b, (le.get(b) ?? 0) + value);
    }
  }
  h.buckets = [...le.entries()].sort(([a], [b]) => a - b);
  return h;
}

/** b − a, bucket by bucket: the samples observed between two scrapes. */
export function minus(b: Histogram, a: Histogram): Histogram {
  const before = new Map(a.buckets);
  return {
    count: b.count - a.count,
    sum: b.sum - a.sum,
    buckets: b.buckets.map(([le, n]) => [le, n - (before.get(le) ?? 0)]),
  };
}

/** The upper bound of the bucket holding quantile q (a histogram knows no better). */
export function quantileBound(h: Histogram, q: number): number {
  const rank = q * h.count;
  for (const [le, n] of h.buckets) if (n >= rank) return le;
  return Infinity;
}

/** Median and maximum of a list of numbers (NaN when empty). */
export function medianMax(xs: readonly number[]): { median: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return { median: NaN, max: NaN };
  const m = s.length >> 1;
  const median = s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
  return { median, max: s[s.length - 1] as number };
}
