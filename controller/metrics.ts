// The controller's /metrics: one Registry, on which each reconciler registers its own metrics (the rotation's:
// rotation/metrics.ts; the status reconciler has none of its own: its writes are counted by the API request
// counter below, by resource and code), plus the controller's own health (passes, queue, API requests, watches,
// leadership), all as docs/observability.md defines them. The exposition is rendered here from prom-client's
// values, with label pairs in name order and a bucket's `le` last, as Prometheus' Go client writes them (some
// tools match the text).
import { Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from './prom.js';
import { RotationMetrics } from './rotation/metrics.js';

/** Prometheus' text format (0.0.4): escape a label value. */
const escapeValue = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const formatNumber = (n: number): string =>
  Number.isNaN(n) ? 'NaN' : n === Infinity ? '+Inf' : n === -Infinity ? '-Inf' : String(n);

/** One sample's label pairs: names in order, `le` last. */
function labelText(labels: Record<string, string | number | undefined>): string {
  const pairs = Object.entries(labels)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .sort(([a], [b]) => (a === 'le' ? 1 : b === 'le' ? -1 : a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}="${escapeValue(typeof v === 'number' ? formatNumber(v) : v)}"`);
  return pairs.length > 0 ? `{${pairs.join(',')}}` : '';
}

/** The exposition text of metrics as prom-client holds them, in Prometheus' Go client's form. */
export function exposition(metrics: readonly MetricObjectWithValues<MetricValue<string>>[]): string {
  const out: string[] = [];
  for (const m of metrics) {
    out.push(`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${String(m.type)}`);
    for (const v of m.values) {
      const name = (v as { metricName?: string }).metricName ?? m.name;
      out.push(`${name}${labelText(v.labels)} ${formatNumber(v.value)}`);
    }
  }
  return `${out.join('\n')}\n`;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  /** The rotation reconciler's: per-NodePool gauges and the engine's transition metrics. */
  readonly rotation = new RotationMetrics(this.registry);

  readonly passSeconds = new Histogram({
    name: 'noderotation_controller_pass_seconds',
    help: "Time of one NodePool's pass: snapshot, decision and the writes it made.",
    labelNames: ['outcome'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'noderotation_controller_queue_depth',
    help: 'NodePools waiting for a pass.',
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'noderotation_controller_api_requests_total',
    help: 'Requests to the Kubernetes API by verb and resource (WATCH counts watch streams opened).',
    labelNames: ['code', 'resource', 'verb'],
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'noderotation_controller_leader',
    help: '1 while this replica holds the leader Lease (or runs without leader election).',
    registers: [this.registry],
  });
  readonly watchHealthy = new Gauge({
    name: 'noderotation_controller_watch_synced',
    help: '1 when the watch of a resource has synced and has no error.',
    labelNames: ['resource'],
    registers: [this.registry],
  });

  /** The exposition text, labels in the Go client's order. */
  async text(): Promise<string> {
    return exposition(await this.registry.getMetricsAsJSON());
  }

  request(verb: string, resource: string, code: number): void {
    this.apiRequests.inc({ code: String(code), resource, verb });
  }
}
