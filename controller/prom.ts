// prom-client's four classes the controller uses, loaded from their own files. prom-client's index also loads
// its default metrics (collectDefaultMetrics, which the controller does not use), and through them
// @opentelemetry/api: 11.5 MiB of resident memory in an idle process (Node 20, after a GC: 51.9 MiB against 40.4
// MiB with these four files; docs/benchmarks.md). The types are prom-client's public ones; the files are the ones
// its index re-exports (15.x has no `exports` map, so they are reachable), and metrics.test.ts checks that these
// are the very classes its index exports and that the controller's module graph never loads @opentelemetry/api.
import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const require = createRequire(import.meta.url);

export const Counter = require('prom-client/lib/counter.js') as typeof Prom.Counter;
export const Gauge = require('prom-client/lib/gauge.js') as typeof Prom.Gauge;
export const Histogram = require('prom-client/lib/histogram.js') as typeof Prom.Histogram;
export const Registry = require('prom-client/lib/registry.js') as typeof Prom.Registry;
export type Counter<T extends string = string> = Prom.Counter<T>;
export type Gauge<T extends string = string> = Prom.Gauge<T>;
export type Histogram<T extends string = string> = Prom.Histogram<T>;
export type Registry = Prom.Registry;
export type { MetricObjectWithValues, MetricValue } from 'prom-client';
