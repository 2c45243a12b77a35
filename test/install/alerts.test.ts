// The alerts and the dashboard with Prometheus' own tool: `promtool check rules` and `promtool test rules` on the
// rule file, every alert covered by a firing test case and linked to a runbook section of docs/operations.md,
// and every PromQL expression of the Grafana dashboard parsed by Prometheus' parser (as recording rules).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { repoRoot, run, toolPath } from './tools.js';

const RULES = path.join(repoRoot, 'deploy/prometheus/alerts.yaml');
const TESTS = path.join(repoRoot, 'deploy/prometheus/alerts.test.yaml');
const DASHBOARD = path.join(repoRoot, 'deploy/grafana/noderotation.json');
const OPERATIONS = path.join(repoRoot, 'docs/operations.md');

interface AlertRule {
  alert: string;
  expr: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
interface RuleTest {
  name: string;
  alert_rule_test: { alertname: string; exp_alerts: { exp_labels: Record<string, string> }[] }[];
}

const alerts = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: AlertRule[] }[] }).groups.flatMap(
  (g) => g.rules,
);
const tests = (parse(readFileSync(TESTS, 'utf8')) as { tests: RuleTest[] }).tests;
const work = mkdtempSync(path.join(tmpdir(), 'noderotation-promtool-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const promtool = (...args: string[]) => {
  const r = run(toolPath('promtool'), args);
  return { code: r.code, out: `${r.stdout}${r.stderr}` };
};

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to dashes. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

describe('alerts (deploy/prometheus/alerts.yaml)', () => {
  it('pass promtool check rules', () => {
    const r = promtool('check', 'rules', RULES);
    expect(r.out).toContain(`SUCCESS: ${alerts.length} rules found`);
    expect(r.code).toBe(0);
  });

  it('pass promtool test rules (alerts.test.yaml)', () => {
    const r = promtool('test', 'rules', TESTS);
    expect(r.out, r.out).toContain('SUCCESS');
    expect(r.code).toBe(0);
  });

  it('fail promtool test rules when an expectation is wrong (the tests can fail)', () => {
    const broken = parse(readFileSync(TESTS, 'utf8')) as { rule_files: string[]; tests: RuleTest[] };
    broken.rule_files = [RULES];
    const firing = broken.tests[0]!.alert_rule_test.find((t) => t.exp_alerts.length > 0)!;
    firing.exp_alerts[0]!.exp_labels.severity = 'page';
    const file = path.join(work, 'broken.test.yaml');
    writeFileSync(file, stringify(broken));
    const r = promtool('test', 'rules', file);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('FAILED');
  });

  it.each(alerts.map((a) => [a.alert, a] as const))('%s has a firing test case', (name) => {
    const firing = tests.flatMap((t) => t.alert_rule_test).filter((t) => t.alertname === name && t.exp_alerts.length);
    expect(firing.length).toBeGreaterThan(0);
  });

  it.each(alerts.map((a) => [a.alert, a] as const))('%s links its runbook section in docs/operations.md', (_n, a) => {
    const headings = [...readFileSync(OPERATIONS, 'utf8').matchAll(/^#{2,4} (.+)$/gm)].map((m) => anchor(m[1]!));
    const url = a.annotations.runbook_url ?? '';
    expect(url).toMatch(/^https:\/\/.+\/docs\/operations\.md#/);
    expect(headings).toContain(url.split('#')[1]);
    expect(a.annotations.summary).toBeTruthy();
    expect(['critical', 'warning', 'info']).toContain(a.labels.severity);
  });
});

describe('the Grafana dashboard (deploy/grafana/noderotation.json)', () => {
  type Panel = { title: string; type: string; targets?: { expr: string }[] };
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
  const panels = dashboard.panels.filter((p) => p.type !== 'row');
  const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
  // Grafana's variables, replaced by what Grafana would put there.
  const concrete = (e: string) =>
    e
      .replaceAll('$job', 'noderotation-controller')
      .replaceAll('$nodepool', '.*')
      .replaceAll('$__rate_interval', '2m')
      .replaceAll('$__range', '7d');

  const check = (list: string[]) => {
    const file = path.join(work, `dashboard-${list.length}.rules.yaml`);
    const rules = list.map((expr, i) => ({ record: `dashboard:expr_${i}`, expr }));
    writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
    return promtool('check', 'rules', file);
  };

  it('every PromQL expression parses (promtool check rules)', () => {
    expect(exprs.length).toBeGreaterThan(15);
    const r = check(exprs.map((e) => concrete(e.expr)));
    expect(r.out).toContain(`SUCCESS: ${exprs.length} rules found`);
    expect(r.code).toBe(0);
  });

  it('the parse check rejects a broken expression', () => {
    const r = check([concrete(exprs[0]!.expr), 'sum by (nodepool (noderotation_candidates)']);
    expect(r.code).not.toBe(0);
  });

  it.each([
    'noderotation_window_active',
    'noderotation_candidates',
    'noderotation_in_progress',
    'noderotation_draining',
    'noderotation_drain_stuck',
    'noderotation_completed_total',
    'noderotation_forceful_fallback_total',
    'phase="surge_wait"',
    'phase="drain"',
    'noderotation_age_threshold_seconds',
    'noderotation_rotation_chances',
    'noderotation_throughput_capacity',
    'noderotation_window_period_seconds',
  ])('shows %s per pool', (metric) => {
    const uses = exprs.filter((e) => e.expr.includes(metric));
    expect(uses.length).toBeGreaterThan(0);
    for (const u of uses) expect(u.expr).toContain('nodepool=~"$nodepool"');
  });
});
