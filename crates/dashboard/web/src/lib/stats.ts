// The exchange's statistics: the samples of the `stats` channel (one a second), a bounded
// window of them, and the series the rates-and-latency chart draws. Pure: no DOM.

export interface StatsSample {
  type: 'stats';
  time_ns: number;
  interval_ms: number;
  rates: {
    orders: number;
    reports: number;
    trades: number;
    md_messages: number;
    ws_messages: number;
    shed: number;
    throttled: number;
  };
  ack_latency_us: { p50: number | null; p99: number | null; p999: number | null; count: number };
  connections: {
    fix_sessions: number;
    fix_connections: number;
    md_sessions: number;
    http: number;
    ws: number;
  };
  totals: { orders: number; reports: number; trades: number; shed: number; throttled: number };
  journal: { last_seq: number };
  lag: {
    market_data_records: number;
    snapshot_records: number | null;
    store_records: number | null;
    store_ms: number | null;
  };
}

/**
 * The chart's columns, uPlot's layout: time (seconds), then orders/s, reports/s, trades/s,
 * market-data messages/s, and ack latency P50, P99, P99.9 in µs (null when no order was
 * acknowledged in that second).
 */
export type StatsSeries = [
  number[],
  number[],
  number[],
  number[],
  number[],
  (number | null)[],
  (number | null)[],
  (number | null)[],
];

export const SERIES_LABELS = [
  'orders/s',
  'reports/s',
  'trades/s',
  'md msgs/s',
  'ack P50',
  'ack P99',
  'ack P99.9',
] as const;

export class StatsWindow {
  readonly samples: StatsSample[] = [];
  /** Bumped at each change, so a view redraws only when it moved. */
  version = 0;

  constructor(readonly cap = 600) {}

  /** Replaces the window with the server's history (oldest first). */
  replace(samples: readonly StatsSample[]): void {
    this.samples.length = 0;
    for (const s of samples) this.push(s);
    this.version++;
  }

  /** Appends a sample; one not after the last (a repeat) is ignored. */
  push(s: StatsSample): boolean {
    const last = this.samples[this.samples.length - 1];
    if (last && s.time_ns <= last.time_ns) return false;
    this.samples.push(s);
    if (this.samples.length > this.cap) this.samples.splice(0, this.samples.length - this.cap);
    this.version++;
    return true;
  }

  get latest(): StatsSample | undefined {
    return this.samples[this.samples.length - 1];
  }

  series(): StatsSeries {
    const n = this.samples.length;
    const out: StatsSeries = [[], [], [], [], [], [], [], []];
    for (let i = 0; i < n; i++) {
      const s = this.samples[i]!;
      out[0].push(s.time_ns / 1e9);
      out[1].push(s.rates.orders);
      out[2].push(s.rates.reports);
      out[3].push(s.rates.trades);
      out[4].push(s.rates.md_messages);
      out[5].push(s.ack_latency_us.p50);
      out[6].push(s.ack_latency_us.p99);
      out[7].push(s.ack_latency_us.p999);
    }
    return out;
  }
}

/** A whole number with thousands separators ("12,345"); "–" for null. */
export function fmtInt(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  return Math.round(n).toLocaleString('en-US');
}
