// One observability vocabulary (issue 19): the registry, the engine's catalogue, docs/observability.md, the alerts
// and the dashboard name the same series with the same labels, and the exposition is the Go client's form.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OBSERVATIONS, TRANSITION_METRICS } from '../src/engine/actions.js';
import { exposition, ControllerMetrics } from './metrics.js';
import { probe } from '../test/support/probe.js';

const read = (p: string): string => readFileSync(new URL(`../${p}`, import.meta.url), 'utf8');
const doc = read('docs/observability.md');

/** Rows of the metric tables: name → its documented labels. */
function documented(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of doc.matchAll(/^\| `(noderotation_\w+)` \| (?:gauge|counter|histogram) \|([^|]*)\|/gm))
    out.set(
      m[1] as string,
      (m[2] as string)
        .replace(/\([^)]*\)/g, '')
        .split(',')
        .map((l) => l.trim().split(' ')[0] as string)
        .filter((l) => l !== ''),
    );
  return out;
}

async function registered(): Promise<Map<string, string[]>> {
  const m = new ControllerMetrics();
  const out = new Map<string, string[]>();
  for (const x of await m.registry.getMetricsAsJSON()) {
    const names = (m.registry.getSingleMetric(x.name) as unknown as { labelNames: string[] }).labelNames;
    out.set(x.name, [...names].sort());
  }
  return out;
}

describe('one vocabulary', () => {
  it('every registered metric is documented with its labels, and every documented one is registered', async () => {
    const reg = await registered();
    const docs = documented();
    for (const [name, labels] of reg)
      expect([name, [...(docs.get(name) ?? ['(undocumented)'])].sort()]).toEqual([name, labels]);
    expect([...docs.keys()].filter((n) => !reg.has(n))).toEqual([]);
  });

  it.each(Object.entries(OBSERVATIONS))('observation %s supplies exactly its metric’s labels', (_name, o) => {
    const metric = TRANSITION_METRICS[o.metric];
    expect([...Object.keys(o.fixed), ...o.supplied].sort()).toEqual([...metric.labels].sort());
  });

  it.each([
    { reason: 'the alerts', file: 'deploy/prometheus/alerts.yaml' },
    { reason: 'the alert tests', file: 'deploy/prometheus/alerts.test.yaml' },
    { reason: 'the dashboard', file: 'deploy/grafana/noderotation.json' },
  ])('$reason name only series the controller exports', async ({ file }) => {
    const reg = await registered();
    const series = new Set([...reg.keys()].flatMap((n) => [n, `${n}_bucket`, `${n}_sum`, `${n}_count`]));
    const named = [...new Set([...read(file).matchAll(/\bnoderotation_[a-z_]+\b/g)].map((m) => m[0]))];
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((n) => !series.has(n))).toEqual([]);
  });

  it('an observation without the label its entry requires is a bug, not a silent series', () => {
    expect(() => new ControllerMetrics().rotation.observe('completed', 'a', 1)).toThrow(/outcome/);
  });
});

describe('exposition', () => {
  it('label pairs in name order, le last, values escaped, as the Go client writes them', () => {
    const text = exposition([
      {
        name: 'x_seconds',
        help: 'a\\b\nc',
        type: 'histogram' as never,
        aggregator: 'sum',
        collect: () => undefined,
        values: [
          { metricName: 'x_seconds_bucket', labels: { le: Infinity, phase: 'drain', nodepool: 'a"b' }, value: 2 },
          { metricName: 'x_seconds_count', labels: { phase: 'drain', nodepool: 'a"b' }, value: 2 },
        ] as never,
      },
    ]);
    expect(text).toBe(
      [
        '# HELP x_seconds a\\\\b\\nc',
        '# TYPE x_seconds histogram',
        'x_seconds_bucket{nodepool="a\\"b",phase="drain",le="+Inf"} 2',
        'x_seconds_count{nodepool="a\\"b",phase="drain"} 2',
        '',
      ].join('\n'),
    );
  });

  it('the registry renders every sample prom-client renders, only in the Go order', async () => {
    const m = new ControllerMetrics();
    m.rotation.observe('completed', 'a', 1, { outcome: 'success' });
    m.rotation.observe('drainSeconds', 'a', 42);
    m.request('GET', 'nodes', 200);
    const ours = (await m.text()).split('\n').filter((l) => l && !l.startsWith('#'));
    const theirs = (await m.registry.metrics()).split('\n').filter((l) => l && !l.startsWith('#'));
    const canonical = (l: string): string => {
      const [series, value] = [l.slice(0, l.lastIndexOf(' ')), l.slice(l.lastIndexOf(' ') + 1)];
      const brace = series.indexOf('{');
      if (brace < 0) return l;
      const pairs = series
        .slice(brace + 1, -1)
        .split(/,(?=\w+=)/)
        .sort();
      return `${series.slice(0, brace)}{${pairs.join(',')}} ${value}`;
    };
    expect(ours.map(canonical).sort()).toEqual(theirs.map(canonical).sort());
    expect(ours).toContain('noderotation_duration_seconds_bucket{nodepool="a",phase="drain",le="60"} 1');
  });
});

describe('prom-client, loaded lean (prom.ts)', () => {
  it('the four classes are the ones prom-client exports', async () => {
    const index = await import('prom-client');
    const lean = await import('./prom.js');
    expect([lean.Counter, lean.Gauge, lean.Histogram, lean.Registry]).toEqual([
      index.Counter,
      index.Gauge,
      index.Histogram,
      index.Registry,
    ]);
    expect(lean.Counter).toBe(index.Counter);
  });

  it("the controller's modules, loaded in a process of their own, never load @opentelemetry/api", () => {
    // A fresh process: this one's module cache holds whatever other tests imported.
    const seen = probe<{ prom: number; otel: string[] }>([
      "const { createRequire } = await import('node:module');",
      "await import('./controller/main.ts');",
      'const loaded = Object.keys(createRequire(import.meta.url).cache);',
      "console.log(JSON.stringify({ prom: loaded.filter((k) => k.includes('prom-client')).length,",
      "  otel: loaded.filter((k) => k.includes('@opentelemetry')) }));",
    ]);
    expect(seen.prom).toBeGreaterThan(3); // the probe sees prom-client's files: it would see otel's
    expect(seen.otel).toEqual([]);
  });
});
