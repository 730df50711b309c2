// Candles (OHLC and volume) built from trades at several intervals. Trades may come in any
// order and more than once (the live channel and the history pages overlap): a trade id is
// counted once, and a candle's open and close are the prices of its lowest and highest trade
// ids, so the result does not depend on the order of arrival. Each interval keeps at most
// `cap` candles, the oldest dropped first. Pure: no DOM.

import { SeenIds, type Trade } from './trades';

export type Interval = '1s' | '1m' | '5m';
export const INTERVALS: readonly Interval[] = ['1s', '1m', '5m'];
export const INTERVAL_SECONDS: Record<Interval, number> = { '1s': 1, '1m': 60, '5m': 300 };

export interface Candle {
  /** Start of the bucket, in seconds since the epoch. */
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

interface Bucket extends Candle {
  openId: number;
  closeId: number;
}

/** What changed in one interval's series since the last `takeChanges`. */
export interface Changes {
  /** The times of the candles changed, when only candles at or after the last drawn changed. */
  updated: number[];
  /** True when a candle before the last drawn one changed, or one was dropped: redraw all. */
  reset: boolean;
}

export class CandleSeries {
  readonly buckets: Bucket[] = [];
  private changed = new Set<number>();
  private reset = true;
  /** The time of the last candle handed out by `takeChanges`. */
  private lastDrawn = -Infinity;

  constructor(
    readonly seconds: number,
    readonly cap: number,
  ) {}

  add(t: Trade, px: number, qty: number): void {
    const time = Math.floor(t.time_ns / 1e9 / this.seconds) * this.seconds;
    const b = this.buckets;
    let i = b.length - 1;
    // Almost always the last bucket or a new one: search from the end.
    if (i >= 0 && b[i]!.time > time) {
      let lo = 0;
      let hi = b.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (b[mid]!.time < time) lo = mid + 1;
        else hi = mid;
      }
      i = lo;
      if (b[i]?.time !== time) {
        if (b.length >= this.cap && i === 0) return; // older than everything kept
        b.splice(i, 0, bucket(time, t.trade_id, px, qty));
        this.trim();
        this.touch(time);
        return;
      }
    } else if (i < 0 || b[i]!.time < time) {
      b.push(bucket(time, t.trade_id, px, qty));
      this.trim();
      this.touch(time);
      return;
    }
    const c = b[i]!;
    if (px > c.high) c.high = px;
    if (px < c.low) c.low = px;
    c.volume += qty;
    if (t.trade_id < c.openId) {
      c.openId = t.trade_id;
      c.open = px;
    }
    if (t.trade_id > c.closeId) {
      c.closeId = t.trade_id;
      c.close = px;
    }
    this.touch(time);
  }

  private trim(): void {
    if (this.buckets.length > this.cap) {
      this.buckets.splice(0, this.buckets.length - this.cap);
      this.reset = true;
    }
  }

  private touch(time: number): void {
    if (time < this.lastDrawn) this.reset = true;
    else this.changed.add(time);
  }

  candles(): Candle[] {
    return this.buckets.map(({ time, open, high, low, close, volume }) => ({
      time,
      open,
      high,
      low,
      close,
      volume,
    }));
  }

  /** What changed since the last call (a chart applies it), and marks all as drawn. */
  takeChanges(): Changes {
    const out: Changes = { updated: [...this.changed].sort((a, b) => a - b), reset: this.reset };
    this.changed.clear();
    this.reset = false;
    const last = this.buckets[this.buckets.length - 1];
    this.lastDrawn = last ? last.time : -Infinity;
    return out;
  }

  /** Whether `takeChanges` has anything to say. */
  get dirty(): boolean {
    return this.reset || this.changed.size > 0;
  }

  /** Forces the next `takeChanges` to redraw everything (a new chart). */
  markReset(): void {
    this.reset = true;
  }

  find(time: number): Candle | undefined {
    const b = this.buckets;
    for (let i = b.length - 1; i >= 0; i--) {
      const c = b[i]!;
      if (c.time === time) return c;
      if (c.time < time) return undefined;
    }
    return undefined;
  }

  clear(): void {
    this.buckets.length = 0;
    this.changed.clear();
    this.reset = true;
    this.lastDrawn = -Infinity;
  }
}

function bucket(time: number, id: number, px: number, qty: number): Bucket {
  return { time, open: px, high: px, low: px, close: px, volume: qty, openId: id, closeId: id };
}

/** Candles at every interval from one stream of trades, each trade id counted once. */
export class Candles {
  readonly series: Record<Interval, CandleSeries>;
  private readonly seen: SeenIds;
  /** The highest trade id counted, or -1. */
  maxId = -1;

  constructor(cap = 1500, seenCap = 50_000) {
    this.series = {
      '1s': new CandleSeries(1, cap),
      '1m': new CandleSeries(60, cap),
      '5m': new CandleSeries(300, cap),
    };
    this.seen = new SeenIds(seenCap);
  }

  /** Counts a trade once; false for an id already counted or a price that is not a number. */
  add(t: Trade): boolean {
    const px = Number(t.price);
    const qty = Number(t.quantity);
    if (!Number.isFinite(px) || !Number.isFinite(qty)) return false;
    if (!this.seen.add(t.trade_id)) return false;
    if (t.trade_id > this.maxId) this.maxId = t.trade_id;
    for (const iv of INTERVALS) this.series[iv].add(t, px, qty);
    return true;
  }

  clear(): void {
    for (const iv of INTERVALS) this.series[iv].clear();
    this.seen.clear();
    this.maxId = -1;
  }
}
