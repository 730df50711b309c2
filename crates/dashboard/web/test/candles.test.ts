import { describe, expect, it } from 'vitest';
import { Candles, CandleSeries } from '../src/lib/candles';
import { SeenIds, Tape, type Trade } from '../src/lib/trades';

const S = 1_000_000_000; // ns per second
const T0 = 1_795_946_100; // a multiple of 300 s

function tr(id: number, sec: number, price: string, qty: string, side = 'buy'): Trade {
  return { trade_id: id, price, quantity: qty, aggressor_side: side, time_ns: sec * S };
}

describe('Candles', () => {
  it('buckets by interval with OHLC and volume', () => {
    expect(T0 % 300).toBe(0);
    const c = new Candles();
    c.add(tr(1, T0 + 0.2, '100.00', '5'));
    c.add(tr(2, T0 + 0.7, '101.50', '2'));
    c.add(tr(3, T0 + 0.9, '99.25', '1'));
    c.add(tr(4, T0 + 1.1, '100.10', '3'));
    c.add(tr(5, T0 + 61, '100.20', '4'));
    c.add(tr(6, T0 + 301, '100.30', '10'));
    expect(c.series['1s'].candles()).toEqual([
      { time: T0, open: 100, high: 101.5, low: 99.25, close: 99.25, volume: 8 },
      { time: T0 + 1, open: 100.1, high: 100.1, low: 100.1, close: 100.1, volume: 3 },
      { time: T0 + 61, open: 100.2, high: 100.2, low: 100.2, close: 100.2, volume: 4 },
      { time: T0 + 301, open: 100.3, high: 100.3, low: 100.3, close: 100.3, volume: 10 },
    ]);
    expect(c.series['1m'].candles()).toEqual([
      { time: T0, open: 100, high: 101.5, low: 99.25, close: 100.1, volume: 11 },
      { time: T0 + 60, open: 100.2, high: 100.2, low: 100.2, close: 100.2, volume: 4 },
      { time: T0 + 300, open: 100.3, high: 100.3, low: 100.3, close: 100.3, volume: 10 },
    ]);
    expect(c.series['5m'].candles()).toEqual([
      { time: T0, open: 100, high: 101.5, low: 99.25, close: 100.2, volume: 15 },
      { time: T0 + 300, open: 100.3, high: 100.3, low: 100.3, close: 100.3, volume: 10 },
    ]);
    expect(c.maxId).toBe(6);
  });

  it('gives the same candles whatever the order of arrival, each id counted once', () => {
    const trades = [
      tr(10, T0 + 0.1, '50.00', '1'),
      tr(11, T0 + 0.2, '52.00', '2'),
      tr(12, T0 + 0.3, '49.00', '3'),
      tr(13, T0 + 2.5, '51.00', '4'),
      tr(14, T0 + 2.6, '50.50', '5'),
    ];
    const inOrder = new Candles();
    for (const t of trades) inOrder.add(t);
    const shuffled = new Candles();
    for (const i of [4, 1, 3, 0, 2]) expect(shuffled.add(trades[i]!)).toBe(true);
    // Duplicates (history overlapping the live channel) are not counted again.
    for (const t of trades) expect(shuffled.add(t)).toBe(false);
    expect(shuffled.series['1s'].candles()).toEqual(inOrder.series['1s'].candles());
    expect(shuffled.series['1s'].candles()).toEqual([
      { time: T0, open: 50, high: 52, low: 49, close: 49, volume: 6 },
      { time: T0 + 2, open: 51, high: 51, low: 50.5, close: 50.5, volume: 9 },
    ]);
    expect(shuffled.series['1m'].candles()).toEqual([
      { time: T0, open: 50, high: 52, low: 49, close: 50.5, volume: 15 },
    ]);
  });

  it('merges history (newest first pages) with a buffer of live trades', () => {
    const c = new Candles();
    // Live trades arrive first (subscribed before the history fetch)...
    c.add(tr(104, T0 + 3.0, '10.04', '1'));
    c.add(tr(105, T0 + 3.5, '10.05', '1'));
    // ...then the history, newest first, overlapping the live ones.
    for (let id = 105; id >= 100; id--) c.add(tr(id, T0 + (id - 100) * 0.75, `10.0${id - 100}`, '2'));
    expect(c.series['1s'].candles()).toEqual([
      { time: T0, open: 10.0, high: 10.01, low: 10.0, close: 10.01, volume: 4 },
      { time: T0 + 1, open: 10.02, high: 10.02, low: 10.02, close: 10.02, volume: 2 },
      { time: T0 + 2, open: 10.03, high: 10.03, low: 10.03, close: 10.03, volume: 2 },
      { time: T0 + 3, open: 10.04, high: 10.05, low: 10.04, close: 10.05, volume: 2 },
    ]);
  });

  it('keeps at most cap candles, dropping the oldest and refusing older ones', () => {
    const c = new Candles(3);
    for (let i = 0; i < 5; i++) c.add(tr(i + 1, T0 + i, String(i + 1), '1'));
    expect(c.series['1s'].candles().map((k) => k.time)).toEqual([T0 + 2, T0 + 3, T0 + 4]);
    expect(c.series['1s'].candles().map((k) => k.close)).toEqual([3, 4, 5]);
    c.add(tr(99, T0 - 10, '7', '1'));
    expect(c.series['1s'].candles().length).toBe(3);
    expect(c.series['1s'].candles()[0]!.time).toBe(T0 + 2);
  });

  it('refuses a price that is not a number', () => {
    const c = new Candles();
    expect(c.add(tr(1, T0, 'abc', '1'))).toBe(false);
    expect(c.series['1s'].candles()).toEqual([]);
  });

  it('reports changes: updates at the end, a reset for an older candle', () => {
    const s = new CandleSeries(1, 100);
    const add = (id: number, sec: number, px: number) => s.add(tr(id, sec, String(px), '1'), px, 1);
    add(1, T0, 1);
    add(2, T0 + 1, 2);
    expect(s.takeChanges()).toEqual({ updated: [T0, T0 + 1], reset: true });
    add(3, T0 + 1.5, 3);
    add(4, T0 + 2, 4);
    expect(s.dirty).toBe(true);
    expect(s.takeChanges()).toEqual({ updated: [T0 + 1, T0 + 2], reset: false });
    expect(s.dirty).toBe(false);
    add(0, T0 + 0.5, 0);
    expect(s.takeChanges()).toEqual({ updated: [], reset: true });
  });
});

describe('Tape', () => {
  it('keeps the newest cap trades, newest first, each id once', () => {
    const t = new Tape(3);
    for (const id of [5, 1, 7, 3, 7, 6]) t.add(tr(id, T0, '1', '1'));
    expect(t.trades.map((x) => x.trade_id)).toEqual([7, 6, 5]);
    expect(t.add(tr(2, T0, '1', '1'))).toBe(false);
    expect(t.newestId).toBe(7);
  });
});

describe('SeenIds', () => {
  it('forgets the oldest beyond its cap', () => {
    const s = new SeenIds(2);
    expect(s.add(1)).toBe(true);
    expect(s.add(2)).toBe(true);
    expect(s.add(1)).toBe(false);
    expect(s.add(3)).toBe(true);
    expect(s.has(1)).toBe(false);
    expect(s.has(2)).toBe(true);
    expect(s.size).toBe(2);
  });
});
