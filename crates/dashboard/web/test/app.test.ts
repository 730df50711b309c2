import { describe, expect, it } from 'vitest';
import { App, type Net, type Socket } from '../src/app';
import type { Answer, Instrument, TradesPage } from '../src/net/api';
import type { ConnectionHandlers, ConnState } from '../src/net/connection';
import type { Trade } from '../src/lib/trades';

const NOW_S = Math.floor(Date.now() / 1000) - 30;

function trade(id: number, sec: number, price: string, qty = '1'): Trade {
  return { trade_id: id, price, quantity: qty, aggressor_side: id % 2 ? 'buy' : 'sell', time_ns: sec * 1e9 };
}

/** A socket and REST that the test drives by hand. */
class FakeNet implements Net {
  sent: object[] = [];
  h!: ConnectionHandlers;
  sock: Socket & { state: ConnState; opens: number };
  /** Trade history newest first, served in pages; or an error answer. */
  history: Trade[] = [];
  historyError: Answer<TradesPage> | null = null;
  pages: (number | null)[] = [];
  private pending: (() => void)[] = [];

  constructor() {
    const net = this;
    this.sock = {
      state: 'closed',
      opens: 0,
      lastMessageMs: null,
      start() {},
      send(msg: object) {
        net.sent.push(msg);
      },
    };
  }

  connect = (h: ConnectionHandlers): Socket => {
    this.h = h;
    return this.sock;
  };

  instruments = async (): Promise<Answer<{ instruments: Instrument[] }>> =>
    ({
      ok: true,
      body: {
        instruments: [
          { symbol: 'ACME', tick_size: '0.01', lot_size: '1', price_decimals: 2 },
          { symbol: 'BOLT', tick_size: '0.01', lot_size: '1', price_decimals: 2 },
        ],
      },
    });

  /** History answers wait for `release`, so live messages can come first. */
  tradesDesc = (symbol: string, since: number | null, limit = 1000): Promise<Answer<TradesPage>> => {
    this.pages.push(since);
    return new Promise((res) => {
      this.pending.push(() => {
        if (this.historyError) return res(this.historyError);
        const older = this.history.filter((t) => since === null || t.trade_id < since).slice(0, limit);
        const last = older[older.length - 1];
        const more = last !== undefined && this.history.some((t) => t.trade_id < last.trade_id);
        res({ ok: true, body: { symbol, trades: older, next_since: more ? last.trade_id : null } });
      });
    });
  };

  async release(): Promise<void> {
    while (this.pending.length > 0) {
      this.pending.shift()!();
      await flush();
    }
  }

  open(): void {
    this.sock.state = 'open';
    this.sock.opens++;
    this.h.onState('open');
    this.h.onOpen();
  }

  close(): void {
    this.sock.state = 'closed';
    this.h.onState('closed');
  }

  msg(m: object): void {
    this.h.onMessage(m, Date.now());
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

async function started(): Promise<{ app: App; net: FakeNet }> {
  const net = new FakeNet();
  const app = new App(() => {}, net);
  await app.start();
  net.open();
  return { app, net };
}

const snapshot = (rpt: number) => ({
  type: 'book_snapshot',
  symbol: 'ACME',
  rpt_seq: rpt,
  bids: [['10.00', '5', 1]],
  asks: [['10.10', '3', 1]],
  time_ns: Date.now() * 1e6,
});

describe('App', () => {
  it('subscribes to the trades before the book, and the stats', async () => {
    const { app, net } = await started();
    expect(app.symbol).toBe('ACME');
    expect(net.sent).toEqual([
      { op: 'subscribe', channel: 'stats' },
      { op: 'subscribe', channel: 'trades', symbol: 'ACME', interval_ms: 250 },
      { op: 'subscribe', channel: 'book', symbol: 'ACME', interval_ms: 250 },
    ]);
    expect(net.pages).toEqual([null]);
  });

  it('merges live trades that came before the history, each once', async () => {
    const { app, net } = await started();
    net.history = [trade(5, NOW_S + 1, '10.05'), trade(4, NOW_S + 1, '10.04'), trade(3, NOW_S, '10.03'), trade(2, NOW_S, '10.02', '2')];
    // Live: 5 (also in the history) and 6, before the history answers.
    net.msg({ type: 'trade', symbol: 'ACME', rpt_seq: 9, trade_id: 5, price: '10.05', quantity: '1', aggressor_side: 'buy', time_ns: (NOW_S + 1) * 1e9 });
    net.msg({ type: 'trade', symbol: 'ACME', rpt_seq: 10, trade_id: 6, price: '10.06', quantity: '1', aggressor_side: 'sell', time_ns: (NOW_S + 1) * 1e9 });
    await net.release();
    expect(app.market!.tape.trades.map((t) => t.trade_id)).toEqual([6, 5, 4, 3, 2]);
    expect(app.market!.candles.series['1s'].candles()).toEqual([
      { time: NOW_S, open: 10.02, high: 10.03, low: 10.02, close: 10.03, volume: 3 },
      { time: NOW_S + 1, open: 10.04, high: 10.06, low: 10.04, close: 10.06, volume: 3 },
    ]);
  });

  it('takes a throttled subscription’s trades batch, each once, and its book snapshots', async () => {
    const { app, net } = await started();
    await net.release();
    const t = (id: number, price: string) => ({ type: 'trade', symbol: 'ACME', rpt_seq: id, trade_id: id, price, quantity: '1', aggressor_side: 'buy', time_ns: (NOW_S + 2) * 1e9 });
    net.msg({ type: 'trades', symbol: 'ACME', trades: [t(7, '10.07'), t(8, '10.08')] });
    net.msg({ type: 'trades', symbol: 'ACME', trades: [t(8, '10.08'), t(9, '10.09')] });
    net.msg({ type: 'trades', symbol: 'BOLT', trades: [t(10, '1.00')] });
    expect(app.market!.tape.trades.map((x) => x.trade_id)).toEqual([9, 8, 7]);
    net.msg(snapshot(7));
    net.msg({ ...snapshot(12), bids: [['10.02', '1', 1]] });
    expect(app.market!.book.view()).toEqual({ rpt_seq: 12, bids: [['10.02', '1', 1]], asks: [['10.10', '3', 1]] });
  });

  it('pages back at most five times', async () => {
    const { app, net } = await started();
    // A trade a second: five pages (5,000 s) do not cover 300 one-minute candles.
    for (let id = 6000; id >= 1; id--) net.history.push(trade(id, NOW_S - (6000 - id), '10.00'));
    await net.release();
    expect(net.pages).toEqual([null, 5001, 4001, 3001, 2001]);
    expect(app.market!.oldestId).toBe(1001);
    expect(app.market!.candles.maxId).toBe(6000);
  });

  it('stops paging once the interval’s window is covered, and pages on for a longer one', async () => {
    const { app, net } = await started();
    // A trade every 10 s: the first page reaches back 10,000 s, the second 20,000 s, beyond
    // 300 one-minute candles (18,000 s).
    for (let id = 3000; id >= 1; id--) net.history.push(trade(id, NOW_S - (3000 - id) * 10, '10.00'));
    await net.release();
    expect(net.pages).toEqual([null, 2001]);
    // Five-minute candles want 90,000 s: on from the oldest fetched, to the first trade.
    app.selectInterval('5m');
    await net.release();
    expect(net.pages).toEqual([null, 2001, 1001]);
    expect(app.market!.oldestId).toBe(1);
    expect(app.market!.historyDone).toBe(true);
  });

  it('says so when there is no trade store', async () => {
    const { app, net } = await started();
    net.historyError = { ok: false, status: 404, code: 'store_off', message: 'no trade store' };
    await net.release();
    expect(app.market!.historyNote).toBe('No trade store on this exchange: candles start from live trades.');
  });

  it('resubscribes the book on a gap, and ignores other instruments', async () => {
    const { app, net } = await started();
    net.msg(snapshot(7));
    net.msg({ type: 'book', symbol: 'BOLT', first_rpt_seq: 1, rpt_seq: 1, bids: [['1', '1', 1]], asks: [] });
    net.msg({ type: 'book', symbol: 'ACME', first_rpt_seq: 8, rpt_seq: 8, bids: [['10.01', '2', 1]], asks: [] });
    expect(app.market!.book.view()).toEqual({ rpt_seq: 8, bids: [['10.01', '2', 1], ['10.00', '5', 1]], asks: [['10.10', '3', 1]] });
    net.sent = [];
    net.msg({ type: 'book', symbol: 'ACME', first_rpt_seq: 10, rpt_seq: 10, bids: [], asks: [] });
    expect(net.sent).toEqual([
      { op: 'unsubscribe', channel: 'book', symbol: 'ACME' },
      { op: 'subscribe', channel: 'book', symbol: 'ACME', interval_ms: 250 },
    ]);
    net.msg(snapshot(12));
    expect(app.market!.book.synced).toBe(true);
    expect(app.market!.book.rptSeq).toBe(12);
    expect(app.feedDelay.medianMs(Date.now())).not.toBeNull();
  });

  it('switches instrument: unsubscribes the old, starts a new market', async () => {
    const { app, net } = await started();
    net.msg(snapshot(7));
    net.sent = [];
    app.selectSymbol('BOLT');
    expect(net.sent).toEqual([
      { op: 'unsubscribe', channel: 'book', symbol: 'ACME' },
      { op: 'unsubscribe', channel: 'trades', symbol: 'ACME' },
      { op: 'subscribe', channel: 'trades', symbol: 'BOLT', interval_ms: 250 },
      { op: 'subscribe', channel: 'book', symbol: 'BOLT', interval_ms: 250 },
    ]);
    expect(app.market!.book.view().bids).toEqual([]);
    // A late ACME message is not BOLT's.
    net.msg(snapshot(8));
    expect(app.market!.book.synced).toBe(false);
  });

  it('after a reconnect, resubscribes and follows the same journal', async () => {
    const { app, net } = await started();
    net.history = [trade(900, NOW_S, '10.00')];
    await net.release();
    net.msg(snapshot(7));
    net.close();
    net.sent = [];
    // The store lags: its newest trade is below the live one we had.
    net.msg({ type: 'trade', symbol: 'ACME', rpt_seq: 2, trade_id: 901, price: '10.01', quantity: '1', aggressor_side: 'buy', time_ns: (NOW_S + 1) * 1e9 });
    net.open();
    expect(net.sent).toEqual([
      { op: 'subscribe', channel: 'stats' },
      { op: 'subscribe', channel: 'trades', symbol: 'ACME', interval_ms: 250 },
      { op: 'subscribe', channel: 'book', symbol: 'ACME', interval_ms: 250 },
    ]);
    // The book waits for its snapshot again.
    expect(app.market!.book.synced).toBe(false);
    net.history = [trade(900, NOW_S, '10.00'), trade(899, NOW_S, '9.99')];
    await net.release();
    expect(app.market!.tape.trades.map((t) => t.trade_id)).toEqual([901, 900, 899]);
  });

  it('after a reconnect to an exchange that started over, starts over too', async () => {
    const { app, net } = await started();
    net.history = [trade(900, NOW_S, '10.00'), trade(899, NOW_S, '10.00')];
    await net.release();
    net.close();
    net.open();
    // The new journal's trades: low ids, later times.
    net.history = [trade(2, NOW_S + 5, '11.00', '3'), trade(1, NOW_S + 4, '11.00', '4')];
    await net.release();
    net.msg({ type: 'trade', symbol: 'ACME', rpt_seq: 2, trade_id: 3, price: '11.00', quantity: '1', aggressor_side: 'buy', time_ns: (NOW_S + 5) * 1e9 });
    expect(app.market!.tape.trades.map((t) => t.trade_id)).toEqual([3, 2, 1]);
    expect(app.market!.candles.series['1s'].candles()).toEqual([
      { time: NOW_S + 4, open: 11, high: 11, low: 11, close: 11, volume: 4 },
      { time: NOW_S + 5, open: 11, high: 11, low: 11, close: 11, volume: 4 },
    ]);
  });

  it('keeps the stats history and its samples; knows a server without stats', async () => {
    const { app, net } = await started();
    const s = (sec: number) => ({
      type: 'stats', time_ns: sec * 1e9, interval_ms: 1000,
      rates: { orders: sec, reports: 0, trades: 0, md_messages: 0, ws_messages: 0, shed: 0, throttled: 0 },
      ack_latency_us: { p50: null, p99: null, p999: null, count: 0 },
      connections: { fix_sessions: 0, fix_connections: 0, md_sessions: 0, http: 0, ws: 0 },
      totals: { orders: 0, reports: 0, trades: 0, shed: 0, throttled: 0 },
      journal: { last_seq: 0 },
      lag: { market_data_records: 0, snapshot_records: null, store_records: null, store_ms: null },
    });
    net.msg({ type: 'stats_history', samples: [s(1), s(2)] });
    net.msg(s(3));
    expect(app.stats.samples.map((x) => x.rates.orders)).toEqual([1, 2, 3]);
    expect(app.statsState).toBe('live');
    const other = await started();
    other.net.msg({ type: 'error', code: 'unknown_channel', message: 'no channel "stats" (book, trades, ticker, orders)' });
    expect(other.app.statsState).toBe('unavailable');
  });
});
