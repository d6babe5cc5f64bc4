import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChronicleMetrics, METRICS_APPS } from './chronicle-metrics';

// docs/grafana-dashboard.json is written by hand: this keeps it honest. Every metric a panel
// or a variable queries must be one some process exports (histograms by their series).

const dashboard = JSON.parse(
  readFileSync(join(__dirname, '..', '..', '..', 'docs', 'grafana-dashboard.json'), 'utf8'),
) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }>; templating: unknown };

/** The series names the processes export: counters and gauges as named, histograms' three. */
function exportedSeries(): Set<string> {
  const series = new Set<string>();
  for (const app of METRICS_APPS) {
    const metrics = new ChronicleMetrics(app);
    for (const metric of metrics.registry.getMetricsAsArray()) {
      const type = (metric as unknown as { type?: string }).type;
      if (type === 'histogram') {
        for (const suffix of ['_bucket', '_sum', '_count']) series.add(`${metric.name}${suffix}`);
      } else if (type === 'summary') {
        for (const suffix of ['', '_sum', '_count']) series.add(`${metric.name}${suffix}`);
      } else series.add(metric.name);
    }
  }
  return series;
}

/** The metric names in a PromQL expression: identifiers that are neither functions nor labels. */
function metricNames(expr: string): string[] {
  const withoutLabels = expr.replace(/\{[^}]*\}/g, '{}').replace(/\b(by|without)\s*\([^)]*\)/g, '');
  const names = withoutLabels.match(/[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*(\{|\[|\)|$|\s|,))/g) ?? [];
  const promql = new Set([
    'sum',
    'max',
    'min',
    'avg',
    'count',
    'rate',
    'increase',
    'irate',
    'histogram_quantile',
    'label_values',
    'le',
    'by',
    'without',
    'job',
    's',
    'm',
    'h',
  ]);
  return names.filter((name) => !promql.has(name) && /[a-z]_[a-z]/.test(name));
}

describe('the Grafana dashboard (docs/grafana-dashboard.json)', () => {
  const exported = exportedSeries();
  const queries = [
    ...dashboard.panels.flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({ where: panel.title, expr: target.expr })),
    ),
    ...JSON.stringify(dashboard.templating)
      .match(/label_values\([^)]*\)/g)!
      .map((expr) => ({ where: 'templating', expr: expr.replace(/\\"/g, '"') })),
  ];

  it('given its panels, then every one queries something', () => {
    expect(queries.length).toBeGreaterThan(10);
    for (const { where, expr } of queries)
      expect({ where, names: metricNames(expr).length > 0 }).toEqual({ where, names: true });
  });

  it('given every query, then each metric it names is one the processes export', () => {
    for (const { where, expr } of queries) {
      for (const name of metricNames(expr)) {
        expect({ where, name, exported: exported.has(name) }).toEqual({
          where,
          name,
          exported: true,
        });
      }
    }
  });

  it('given the chronicle_ metrics the processes export, then the dashboard shows every one', () => {
    const shown = new Set(queries.flatMap(({ expr }) => metricNames(expr)));
    const ours = [...exported].filter((name) => name.startsWith('chronicle_'));
    const base = (name: string) => name.replace(/_(bucket|sum|count)$/, '');
    for (const name of ours) {
      const family = base(name);
      const seen = [...shown].some((s) => base(s) === family);
      expect({ family, seen }).toEqual({ family, seen: true });
    }
  });
});
