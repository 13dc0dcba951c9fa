import type { Metric, Registry } from 'prom-client';

// chaingate_http_requests_total and chaingate_http_request_duration_seconds, counted in one table
// keyed by route, method and status: a request costs three Map lookups and a bucket search. The
// lookups are by the strings the caller passes on every request (the route's registered path, the
// HTTP parser's method), whose hashes V8 keeps, and the status number: no key string is built and
// hashed per request. prom-client's
// Counter and Histogram validate and hash a label object on every call, 3 µs of a buyer poll
// (docs/performance.md); the samples they would print are built here at scrape time instead, in
// the same shape (a counter, and a histogram's cumulative _bucket lines with le, _sum and _count).

interface Row {
  labels: { route: string; method: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative), the last one for +Inf. */
  buckets: number[];
}

interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

export interface RequestTable {
  observe(route: string, method: string, status: number, seconds: number): void;
}

export function registerRequestTable(registry: Registry, bounds: readonly number[]): RequestTable {
  /** In the order first seen (the order prom-client prints label sets in). */
  const rows: Row[] = [];
  const index = new Map<string, Map<string, Map<number, Row>>>();

  /** A metric the registry prints like its own (it reads name, help, type and get()). */
  const metric = (name: string, help: string, type: 'counter' | 'histogram', samples: () => Sample[]) =>
    ({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }),
      reset: () => {
        rows.length = 0;
        index.clear();
      },
    }) as unknown as Metric;

  registry.registerMetric(
    metric('chaingate_http_requests_total', 'HTTP requests by route, method and status', 'counter', () =>
      rows.map((r) => ({ labels: r.labels, value: r.count })),
    ),
  );
  const durations = 'chaingate_http_request_duration_seconds';
  registry.registerMetric(
    metric(durations, 'HTTP request duration by route, method and status', 'histogram', () =>
      rows.flatMap((r) => {
        let below = 0;
        const buckets = bounds.map((le, i) => ({ metricName: `${durations}_bucket`, labels: { le, ...r.labels }, value: (below += r.buckets[i]!) }));
        return [
          ...buckets,
          { metricName: `${durations}_bucket`, labels: { le: '+Inf', ...r.labels }, value: r.count },
          { metricName: `${durations}_sum`, labels: r.labels, value: r.sum },
          { metricName: `${durations}_count`, labels: r.labels, value: r.count },
        ];
      }),
    ),
  );

  return {
    observe(route, method, status, seconds) {
      let byMethod = index.get(route);
      if (byMethod === undefined) index.set(route, (byMethod = new Map()));
      let byStatus = byMethod.get(method);
      if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
      let row = byStatus.get(status);
      if (row === undefined) {
        row = { labels: { route, method, status: String(status) }, count: 0, sum: 0, buckets: new Array<number>(bounds.length + 1).fill(0) };
        byStatus.set(status, row);
        rows.push(row);
      }
      row.count += 1;
      row.sum += seconds;
      let i = 0;
      while (i < bounds.length && seconds > bounds[i]!) i += 1;
      row.buckets[i]! += 1;
    },
  };
}
