// The installation files that are derived from a single source elsewhere (`npm run generate`; a test fails when a
// committed one differs): the Helm chart's CRDs (from deploy/crds), its RBAC (from controller/rbac.ts, the one
// place the controller's permissions are defined), its admission policies (from controller/admission.ts), the
// PrometheusRule of both installs (from the promtool rule file deploy/prometheus/alerts.yaml), the Crossplane
// function's ClusterRole (from examples/crossplane) and the Grafana dashboard (from the panel list below).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { admissionPolicy } from '../controller/admission.js';
import { rbacManifests } from '../controller/rbac.js';

export const CHART = 'charts/noderotation';
export const CRD_FILES = ['noderotation.io_rotationpolicies.yaml', 'noderotation.io_maintenanceplans.yaml'];
export const ALERTS = 'deploy/prometheus/alerts.yaml';
export const DASHBOARD = 'deploy/grafana/noderotation.json';
const FUNCTION_ROLE = 'examples/crossplane/clusterrole.yaml';

/** A CRD's chart labels, and Helm's keep policy when crds.keep. */
const CRD_META = [
  '  labels:',
  '    {{- include "noderotation.labels" . | nindent 4 }}',
  '  {{- if .Values.crds.keep }}',
  '  annotations:',
  '    helm.sh/resource-policy: keep',
  '  {{- end }}',
  '',
].join('\n');

const generatedFrom = (source: string, hash = '#'): string =>
  `${hash} Generated from ${source} by \`npm run generate\`; do not edit.\n`;

/**
 * Generated manifests as a chart template: the sentinel namespace and name replaced by the release's namespace and
 * the chart's name, the labels by Helm's; inside `{{- if <condition> }}` when one is given.
 */
function chartTemplate(source: string, manifests: Record<string, unknown>[], condition?: string): string {
  // Sentinels that stringify writes as plain scalars, replaced by template actions afterwards.
  const docs = manifests.map((m) => {
    const meta = m.metadata as Record<string, unknown>;
    return `---\n${stringify({ ...m, metadata: { ...meta, labels: 'LABELS__' } }, { lineWidth: 0 })}`;
  });
  const labels = [
    'labels:',
    '    {{- include "noderotation.labels" . | nindent 4 }}',
    '    app.kubernetes.io/component: controller',
  ].join('\n');
  const body = docs
    .join('')
    .replaceAll('NAMESPACE__', '{{ .Release.Namespace }}')
    .replaceAll('SERVICEACCOUNT__', '{{ include "noderotation.serviceAccountName" . }}')
    .replaceAll('NAME__', '{{ include "noderotation.fullname" . }}')
    .replaceAll('labels: LABELS__', labels);
  return (
    `{{- /* Generated from ${source} by \`npm run generate\`; do not edit. */ -}}\n` +
    (condition ? `{{- if ${condition} }}\n${body}{{- end }}\n` : body)
  );
}

export function installFiles(root: string): Map<string, string> {
  const read = (p: string): string => readFileSync(join(root, p), 'utf8');
  const out = new Map<string, string>();

  // The CRDs as templates rather than in crds/ (which Helm installs once and never upgrades): rendered with
  // crds.install, and kept by Helm on uninstall with crds.keep (deleting a CRD deletes every policy and plan).
  for (const f of CRD_FILES)
    out.set(
      `${CHART}/templates/crds/${f}`,
      `{{- /* Generated from deploy/crds/${f} by \`npm run generate\`; do not edit. */ -}}\n` +
        `{{- if .Values.crds.install }}\n` +
        read(`deploy/crds/${f}`).replace(/^metadata:\n {2}name: .*\n/m, (m) => `${m}${CRD_META}`) +
        '{{- end }}\n',
    );
  // The ServiceAccount is the chart's own template (serviceAccount.create, its annotations); the roles bind the
  // one the values name.
  out.set(
    `${CHART}/templates/rbac.yaml`,
    chartTemplate(
      'controller/rbac.ts',
      rbacManifests('NAMESPACE__', 'NAME__', 'SERVICEACCOUNT__').filter((m) => m.kind !== 'ServiceAccount'),
    ),
  );
  // The policies match the release's ServiceAccount (admissionPolicy.enabled).
  out.set(
    `${CHART}/templates/admission.yaml`,
    chartTemplate(
      'controller/admission.ts',
      admissionPolicy({ namespace: 'NAMESPACE__', serviceAccount: 'SERVICEACCOUNT__', name: 'NAME__' }),
      '.Values.admissionPolicy.enabled',
    ),
  );

  const alerts = read(ALERTS);
  const groups = (parse(alerts) as { groups: unknown[] }).groups;
  out.set(
    'deploy/prometheus/prometheusrule.yaml',
    generatedFrom(ALERTS) +
      stringify(
        {
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'PrometheusRule',
          metadata: { name: 'noderotation', labels: { 'app.kubernetes.io/name': 'noderotation' } },
          spec: { groups },
        },
        // Folded scalars with more-indented lines read back differently in kustomize's YAML library.
        { blockQuote: 'literal' },
      ),
  );
  // Read with .Files.Get, so the alerts' own {{ $labels }} templates pass through Helm untouched; quoted
  // one-line strings, because the template re-indents the file and block scalars would not survive that.
  out.set(
    `${CHART}/files/alerts.yaml`,
    generatedFrom(ALERTS) + stringify({ groups }, { blockQuote: false, lineWidth: 0 }),
  );

  const role = generatedFrom(FUNCTION_ROLE) + read(FUNCTION_ROLE);
  out.set('deploy/crossplane/clusterrole.yaml', role);
  out.set(`${CHART}/templates/function-clusterrole.yaml`, `{{- if .Values.function.enabled }}\n${role}{{- end }}\n`);

  const dashboard = `${JSON.stringify(grafanaDashboard(), null, 2)}\n`;
  out.set(DASHBOARD, dashboard);
  out.set(`${CHART}/files/noderotation.json`, dashboard);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The Grafana dashboard: one row per question an operator asks, every query per NodePool (`$nodepool`).
// ---------------------------------------------------------------------------------------------------------

interface Panel {
  title: string;
  description: string;
  /** PromQL, each with its legend. */
  targets: { expr: string; legend: string }[];
  type: 'timeseries' | 'state-timeline' | 'stat';
  unit?: string;
  width?: number;
}

const sel = (extra = ''): string => `{job="$job",nodepool=~"$nodepool"${extra}}`;
const perPool = (metric: string): string => `max by (nodepool) (${metric}${sel()})`;
/** A panel of one per-pool gauge. */
const gauge = (title: string, description: string, metric: string, type: Panel['type'], unit?: string): Panel => ({
  title,
  description,
  targets: [{ expr: perPool(metric), legend: '{{nodepool}}' }],
  type,
  ...(unit ? { unit } : {}),
});

/** p50 and p95 per pool of one phase of noderotation_duration_seconds. */
const durationQuantiles = (title: string, what: string, phase: string): Panel => ({
  title: `${title} (p50, p95)`,
  description: `${what} (noderotation_duration_seconds{phase="${phase}"}).`,
  targets: [0.5, 0.95].map((q) => ({
    expr:
      `histogram_quantile(${q}, sum by (nodepool, le) ` +
      `(rate(noderotation_duration_seconds_bucket${sel(`,phase="${phase}"`)}[$__rate_interval])))`,
    legend: `{{nodepool}} p${q * 100}`,
  })),
  type: 'timeseries',
  unit: 's',
});

const ROWS: { title: string; panels: Panel[] }[] = [
  {
    title: 'Now',
    panels: [
      gauge(
        'Maintenance window open',
        '1 while the NodePool is inside its maintenance window (noderotation_window_active).',
        'noderotation_window_active',
        'state-timeline',
      ),
      gauge(
        'Rotation in flight',
        '1 while a rotation is anchored in the NodePool (noderotation_in_progress).',
        'noderotation_in_progress',
        'state-timeline',
      ),
      {
        title: 'Rotation phase',
        description:
          '0 none, 1 waiting for the surge node, 2 draining the old node ' +
          '(noderotation_in_progress + noderotation_draining).',
        targets: [
          {
            expr: `${perPool('noderotation_in_progress')} + ${perPool('noderotation_draining')}`,
            legend: '{{nodepool}}',
          },
        ],
        type: 'state-timeline',
      },
      gauge(
        'Drain stuck',
        'The rotation is in its drain phase and the drain exceeds terminationGracePeriod + 2m.',
        'noderotation_drain_stuck',
        'state-timeline',
      ),
      gauge(
        'Candidates',
        'NodeClaims older than the age threshold A, waiting for a window (noderotation_candidates).',
        'noderotation_candidates',
        'timeseries',
      ),
      gauge(
        'Blocked: conflict or invalid policy',
        '1 when an equal-specificity tie or an invalid policy blocks the NodePool.',
        'noderotation_policy_conflict',
        'state-timeline',
      ),
      {
        title: 'Frozen until',
        description: 'End of an active freeze (noderotation_freeze_until_timestamp), empty when none.',
        targets: [{ expr: `${perPool('noderotation_freeze_until_timestamp')} * 1000 > 0`, legend: '{{nodepool}}' }],
        type: 'stat',
        unit: 'dateTimeAsIso',
      },
    ],
  },
  {
    title: 'Outcomes',
    panels: [
      {
        title: 'Completed rotations by outcome',
        description: 'success, failure (rolled back at readyTimeout), expired (Karpenter removed the claim first).',
        targets: [
          {
            expr: `sum by (nodepool, outcome) (increase(noderotation_completed_total${sel()}[$__range]))`,
            legend: '{{nodepool}} {{outcome}}',
          },
        ],
        type: 'stat',
      },
      {
        title: 'Forceful fallbacks and expirations',
        description: 'Surge-less fallback rotations started, and claims Karpenter expired before their rotation.',
        targets: [
          {
            expr: `sum by (nodepool) (increase(noderotation_forceful_fallback_total${sel()}[$__rate_interval]))`,
            legend: '{{nodepool}} fallback',
          },
          {
            expr:
              'sum by (nodepool) ' +
              `(increase(noderotation_completed_total${sel(',outcome="expired"')}[$__rate_interval]))`,
            legend: '{{nodepool}} expired',
          },
        ],
        type: 'timeseries',
      },
      gauge(
        'Retries',
        'Highest retry-count of a NodeClaim in the NodePool (noderotation_retry_count).',
        'noderotation_retry_count',
        'timeseries',
      ),
    ],
  },
  {
    title: 'Durations',
    panels: [
      durationQuantiles('Surge wait', 'Rotation start to surge node Ready', 'surge_wait'),
      durationQuantiles('Drain', 'Drain start to the old NodeClaim gone', 'drain'),
    ],
  },
  {
    title: 'Forecast (docs/api.md, Forecast)',
    panels: [
      gauge(
        'NodeClaims at risk',
        'NodeClaims with no planned start that finishes before they are due: Karpenter will force-expire them ' +
          '(noderotation_nodepool_claims_at_risk).',
        'noderotation_nodepool_claims_at_risk',
        'timeseries',
      ),
      gauge(
        'Smallest forecast margin',
        'Due instant − planned start − t_rot of the tightest planned NodeClaim; negative: it may not finish in ' +
          'time (noderotation_nodepool_min_forecast_margin_seconds).',
        'noderotation_nodepool_min_forecast_margin_seconds',
        'timeseries',
        's',
      ),
      {
        title: 'NodeClaims forced within a day, a week',
        description:
          'NodeClaims whose forced expiry (creation + expireAfter) is at most 1 day and 7 days away, as of the ' +
          "pool's latest pass (noderotation_nodeclaim_time_until_forced_expiry_seconds).",
        targets: [86400, 604800].map((le) => ({
          expr:
            'max by (nodepool) ' +
            `(noderotation_nodeclaim_time_until_forced_expiry_seconds_bucket${sel(`,le="${le}"`)})`,
          legend: `{{nodepool}} ≤ ${le === 86400 ? '1 day' : '7 days'}`,
        })),
        type: 'timeseries',
      },
    ],
  },
  {
    title: 'Derived figures (design §3.2)',
    panels: [
      gauge(
        'Age threshold A',
        'A = expireAfter − leadTime: a NodeClaim older than this is a candidate.',
        'noderotation_age_threshold_seconds',
        'timeseries',
        's',
      ),
      gauge(
        'Guaranteed chances G',
        'Windows the schedule guarantees each node before its expiry.',
        'noderotation_rotation_chances',
        'timeseries',
      ),
      gauge('Capacity C', 'Rotations per window occurrence.', 'noderotation_throughput_capacity', 'timeseries'),
      gauge(
        'Window period P',
        'The worst start-to-start gap between window occurrences.',
        'noderotation_window_period_seconds',
        'timeseries',
        's',
      ),
      gauge(
        'Short-lead nodes',
        'NodeClaims whose own expireAfter cannot guarantee minRotationChances windows.',
        'noderotation_short_lead_nodes',
        'timeseries',
      ),
    ],
  },
  {
    title: 'Controller',
    panels: [
      {
        title: 'Replicas up and leading',
        description: 'Scraped replicas, and how many hold the leader Lease (exactly one when healthy).',
        targets: [
          { expr: 'sum(up{job="$job"})', legend: 'up' },
          { expr: 'sum(noderotation_controller_leader{job="$job"})', legend: 'leading' },
        ],
        type: 'timeseries',
      },
      {
        title: 'Watches synced',
        description: '1 per resource when its watch has synced without error.',
        targets: [
          { expr: 'min by (resource) (noderotation_controller_watch_synced{job="$job"})', legend: '{{resource}}' },
        ],
        type: 'state-timeline',
      },
      {
        title: 'API requests by code',
        description: 'Requests to the Kubernetes API by the controller, per second.',
        targets: [
          {
            expr: 'sum by (code) (rate(noderotation_controller_api_requests_total{job="$job"}[$__rate_interval]))',
            legend: '{{code}}',
          },
        ],
        type: 'timeseries',
        unit: 'reqps',
      },
    ],
  },
];

export function grafanaDashboard(): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of ROWS) {
    panels.push({ type: 'row', title: row.title, id: id++, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y } });
    y += 1;
    let x = 0;
    for (const p of row.panels) {
      const w = p.width ?? 8;
      if (x + w > 24) {
        x = 0;
        y += 8;
      }
      panels.push({
        type: p.type,
        title: p.title,
        description: p.description,
        id: id++,
        datasource: { type: 'prometheus', uid: '${datasource}' },
        gridPos: { h: 8, w, x, y },
        fieldConfig: { defaults: { unit: p.unit ?? 'short' }, overrides: [] },
        options: {},
        targets: p.targets.map((t, i) => ({
          refId: String.fromCharCode(65 + i),
          expr: t.expr,
          legendFormat: t.legend,
          datasource: { type: 'prometheus', uid: '${datasource}' },
        })),
      });
      x += w;
    }
    y += 8;
  }
  return {
    title: 'noderotation',
    uid: 'noderotation',
    description: 'Karpenter node rotation per NodePool: windows, rotations, outcomes, durations, derived figures.',
    tags: ['noderotation', 'karpenter'],
    schemaVersion: 39,
    version: 1,
    editable: true,
    time: { from: 'now-7d', to: 'now' },
    refresh: '1m',
    templating: {
      list: [
        { name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus' },
        {
          name: 'job',
          label: 'Job',
          type: 'custom',
          query: 'noderotation-controller',
          current: { text: 'noderotation-controller', value: 'noderotation-controller' },
          hide: 2,
        },
        {
          name: 'nodepool',
          label: 'NodePool',
          type: 'query',
          datasource: { type: 'prometheus', uid: '${datasource}' },
          query: { query: 'label_values(noderotation_candidates{job="$job"}, nodepool)', refId: 'nodepool' },
          definition: 'label_values(noderotation_candidates{job="$job"}, nodepool)',
          multi: true,
          includeAll: true,
          allValue: '.*',
          refresh: 2,
          sort: 1,
        },
      ],
    },
    panels,
  };
}
