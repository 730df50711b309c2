import { describe, expect, it } from 'vitest';
import { FeedDelay } from '../src/lib/feed';
import { fmtInt, StatsWindow, type StatsSample } from '../src/lib/stats';

function sample(sec: number, orders: number, p50: number | null): StatsSample {
  return {
    type: 'stats',
    time_ns: sec * 1e9,
    interval_ms: 1000,
    rates: { orders, reports: orders * 2, trades: orders >> 1, md_messages: orders * 3, ws_messages: 7, shed: 0, throttled: 1 },
    ack_latency_us: { p50, p99: p50 === null ? null : p50 * 10, p999: p50 === null ? null : p50 * 100, count: p50 === null ? 0 : orders },
    connections: { fix_sessions: 6, fix_connections: 6, md_sessions: 1, http: 2, ws: 1 },
    totals: { orders: orders * sec, reports: 0, trades: 0, shed: 0, throttled: 0 },
    journal: { last_seq: sec * 10 },
    lag: { market_data_records: 0, snapshot_records: null, store_records: 3, store_ms: 2 },
  };
}

describe('StatsWindow', () => {
  it('builds the chart columns, with null latency where nothing was acknowledged', () => {
    const w = new StatsWindow();
    w.replace([sample(100, 2000, 15), sample(101, 0, null)]);
    w.push(sample(102, 1000, 20));
    expect(w.series()).toEqual([
      [100, 101, 102],
      [2000, 0, 1000],
      [4000, 0, 2000],
      [1000, 0, 500],
      [6000, 0, 3000],
      [15, null, 20],
      [150, null, 200],
      [1500, null, 2000],
    ]);
    expect(w.latest!.journal.last_seq).toBe(1020);
  });

  it('keeps a bounded window and ignores repeats', () => {
    const w = new StatsWindow(3);
    for (let s = 1; s <= 5; s++) expect(w.push(sample(s, s, 1))).toBe(true);
    expect(w.push(sample(5, 99, 1))).toBe(false);
    expect(w.push(sample(4, 99, 1))).toBe(false);
    expect(w.samples.map((s) => s.time_ns / 1e9)).toEqual([3, 4, 5]);
    expect(w.series()[1]).toEqual([3, 4, 5]);
  });

  it('replace starts over (a reconnect gets the server history again)', () => {
    const w = new StatsWindow();
    w.push(sample(50, 1, 1));
    w.replace([sample(10, 2, 2)]);
    expect(w.samples.length).toBe(1);
    expect(w.push(sample(11, 3, 3))).toBe(true);
    expect(w.series()[0]).toEqual([10, 11]);
  });

  it('formats integers', () => {
    expect(fmtInt(1234567)).toBe('1,234,567');
    expect(fmtInt(null)).toBe('–');
  });
});

describe('FeedDelay', () => {
  it('is the median over the last second', () => {
    const f = new FeedDelay(16);
    expect(f.medianMs(10_000)).toBeNull();
    // Arrived at 8,000 ms (older than a second before 10,000): not counted.
    f.record(8_000, 7_000 * 1e6);
    f.record(9_500, 9_497 * 1e6); // 3 ms
    f.record(9_600, 9_599 * 1e6); // 1 ms
    f.record(9_900, 9_890 * 1e6); // 10 ms
    expect(f.medianMs(10_000)).toBe(3);
    f.record(9_950, 9_945 * 1e6); // 5 ms
    expect(f.medianMs(10_000)).toBe(4);
    expect(f.medianMs(20_000)).toBeNull();
  });

  it('wraps around its ring', () => {
    const f = new FeedDelay(4);
    for (let i = 0; i < 10; i++) f.record(1000 + i, (1000 + i - i) * 1e6);
    // The last four: delays 6, 7, 8, 9.
    expect(f.medianMs(1009)).toBe(7.5);
  });
});
