import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { registerRequestTable } from './request-table.ts';

const BOUNDS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

test("the request table prints what prom-client's Counter and Histogram print for the same requests", async () => {
  const theirs = new Registry();
  const count = new Counter({ name: 'chaingate_http_requests_total', help: 'HTTP requests by route, method and status', labelNames: ['route', 'method', 'status'], registers: [theirs] });
  const time = new Histogram({ name: 'chaingate_http_request_duration_seconds', help: 'HTTP request duration by route, method and status', labelNames: ['route', 'method', 'status'], buckets: BOUNDS, registers: [theirs] });
  const ours = new Registry();
  const table = registerRequestTable(ours, BOUNDS);

  // On a bound, between bounds, past the last one, a label value that needs escaping.
  const requests: [string, string, number, number][] = [
    ['/api/v1/invoices', 'POST', 201, 0.005],
    ['/api/v1/invoices', 'POST', 201, 0.0051],
    ['/api/v1/invoices', 'POST', 409, 0.0001],
    ['/checkout/api/v1/payments/:id/status', 'GET', 200, 3.75],
    ['/checkout/api/v1/payments/:id/status', 'GET', 200, 2.5],
    ['unmatched', 'GET', 404, 0],
    ['/a"b\\c', 'PATCH', 500, 0.3],
  ];
  for (const [route, method, status, seconds] of requests) {
    const labels = { route, method, status: String(status) };
    count.inc(labels);
    time.observe(labels, seconds);
    table.observe(route, method, status, seconds);
  }
  assert.equal(await ours.metrics(), await theirs.metrics());
  assert.match(await ours.metrics(), /^chaingate_http_request_duration_seconds_bucket\{le="0.005",route="\/api\/v1\/invoices",method="POST",status="201"\} 1$/m);

  ours.resetMetrics();
  assert.equal(await ours.metrics(), (await theirs.metrics()).split('\n').filter((l) => l.startsWith('#') || l === '').join('\n'));
});
