// The dashboard's model and what feeds it: the WebSocket's messages and the REST history. A
// message only updates the model and sets dirty marks; the views draw from the model once a
// frame (main.ts).

import { Book, type BookDeltaMsg, type BookSnapshotMsg } from './lib/book';
import { Candles, INTERVAL_SECONDS, type Interval } from './lib/candles';
import { FeedDelay } from './lib/feed';
import { StatsWindow, type StatsSample } from './lib/stats';
import { Tape, type Trade } from './lib/trades';
import { Connection, wsUrl, type ConnectionHandlers, type ConnState } from './net/connection';
import * as api from './net/api';

/** The socket as the model uses it (Connection; a fake in the tests). */
export interface Socket {
  readonly state: ConnState;
  readonly opens: number;
  readonly lastMessageMs: number | null;
  start(): void;
  send(msg: object): void;
}

/** What the model needs of the network: the socket and two REST calls. */
export interface Net {
  connect(h: ConnectionHandlers): Socket;
  instruments: typeof api.instruments;
  tradesDesc: typeof api.tradesDesc;
}

const realNet: Net = {
  connect: (h) => new Connection(wsUrl(), h),
  instruments: api.instruments,
  tradesDesc: api.tradesDesc,
};

/** Trades shown in the tape. */
export const TAPE_LEN = 50;
/** History pages fetched for the candles at most, each of 1,000 trades. */
const HISTORY_PAGES = 5;
/** Candles of the chosen interval the history should cover. */
const HISTORY_CANDLES = 300;
/**
 * The book and trades arrive at most this often (the server's throttled subscriptions: the
 * latest book as a snapshot, the interval's trades in one message), whatever the market's pace.
 */
const THROTTLE_MS = 250;

export type StatsState = 'waiting' | 'live' | 'unavailable';

interface TradeMsg {
  type: 'trade';
  symbol: string;
  rpt_seq: number;
  trade_id: number;
  price: string;
  quantity: string;
  aggressor_side: string;
  time_ns?: number;
}

/** The market of the instrument on view. */
export class Market {
  readonly book: Book;
  readonly tape = new Tape(TAPE_LEN);
  readonly candles = new Candles();
  /** A line under the chart about the history (none, partial...), or ''. */
  historyNote = '';
  noteVersion = 0;
  /** The oldest trade id fetched, to page further back; null before any page. */
  oldestId: number | null = null;
  oldestNs: number | null = null;
  /** Whether the history has no older page (or none could be read). */
  historyDone = false;

  constructor(readonly symbol: string) {
    this.book = new Book(symbol);
  }

  setNote(n: string): void {
    if (n !== this.historyNote) {
      this.historyNote = n;
      this.noteVersion++;
    }
  }

  addTrade(t: Trade): void {
    this.candles.add(t);
    this.tape.add(t);
  }

  reset(): void {
    this.tape.clear();
    this.candles.clear();
    this.oldestId = null;
    this.oldestNs = null;
    this.historyDone = false;
  }
}

export class App {
  instruments: api.Instrument[] = [];
  instrumentsVersion = 0;
  market: Market | null = null;
  interval: Interval = '1m';
  readonly stats = new StatsWindow(600);
  statsState: StatsState = 'waiting';
  readonly feedDelay = new FeedDelay();
  readonly conn: Socket;
  connState: ConnState = 'closed';
  /** Bumped when the connection state changes. */
  connVersion = 0;
  /** The last error the server sent, shown small in the header. */
  lastError = '';
  /** Bumped at each history fetch started: an older fetch's pages are dropped. */
  private historyGen = 0;
  /**
   * After a reconnect, the newest trade held before it. In one journal trade ids grow with
   * time: a trade with an id at or below that one but a later time comes from a journal that
   * started over, and the market starts over with it.
   */
  private before: { id: number; timeNs: number } | null = null;

  /** `changed` is called after anything in the model changed: it schedules a frame. */
  constructor(
    private readonly changed: () => void = () => {},
    private readonly net: Net = realNet,
  ) {
    this.conn = net.connect({
      onOpen: () => this.onOpen(),
      onMessage: (m, now) => {
        this.onMessage(m, now);
        this.changed();
      },
      onState: (s) => {
        this.connState = s;
        this.connVersion++;
        this.changed();
      },
    });
  }

  async start(): Promise<void> {
    this.conn.start();
    await this.loadInstruments();
  }

  private async loadInstruments(): Promise<void> {
    for (let wait = 500; ; wait = Math.min(wait * 2, 5000)) {
      const r = await this.net.instruments();
      if (r.ok && r.body.instruments.length > 0) {
        this.instruments = r.body.instruments;
        this.instrumentsVersion++;
        this.changed();
        if (!this.market || !this.instruments.some((i) => i.symbol === this.market!.symbol)) {
          this.selectSymbol(this.instruments[0]!.symbol);
        }
        return;
      }
      await new Promise((res) => setTimeout(res, wait));
    }
  }

  get symbol(): string {
    return this.market?.symbol ?? '';
  }

  selectSymbol(symbol: string): void {
    const old = this.market;
    if (old && old.symbol === symbol) return;
    if (old) {
      this.conn.send({ op: 'unsubscribe', channel: 'book', symbol: old.symbol });
      this.conn.send({ op: 'unsubscribe', channel: 'trades', symbol: old.symbol });
    }
    this.market = new Market(symbol);
    this.feedDelay.clear();
    this.changed();
    this.subscribeMarket();
  }

  selectInterval(iv: Interval): void {
    this.interval = iv;
    this.market?.candles.series[iv].markReset();
    this.changed();
    // A longer interval may want older trades than the pages fetched so far.
    if (this.market && !this.historyCovered()) void this.fetchHistory(this.market, false);
  }

  /** Whether the history fetched covers the chosen interval's window (or there is no more). */
  private historyCovered(): boolean {
    const m = this.market;
    if (!m || m.historyDone) return true;
    return m.oldestNs !== null && m.oldestNs <= this.historyStartNs();
  }

  private historyStartNs(): number {
    return (Date.now() / 1000 - INTERVAL_SECONDS[this.interval] * HISTORY_CANDLES) * 1e9;
  }

  private onOpen(): void {
    this.conn.send({ op: 'subscribe', channel: 'stats' });
    if (this.conn.opens > 1 && this.market) {
      const t = this.market.tape.trades[0];
      this.before = t ? { id: t.trade_id, timeNs: t.time_ns } : null;
    }
    if (this.market) {
      // The page reconnected: the book comes again as a snapshot, history is fetched again.
      this.market.book.synced = false;
      this.subscribeMarket();
    }
  }

  /** Trades first (buffered into the model while the history loads), then the book. */
  private subscribeMarket(): void {
    const m = this.market;
    if (!m || this.conn.state !== 'open') return;
    this.conn.send({ op: 'subscribe', channel: 'trades', symbol: m.symbol, interval_ms: THROTTLE_MS });
    this.conn.send({ op: 'subscribe', channel: 'book', symbol: m.symbol, interval_ms: THROTTLE_MS });
    void this.fetchHistory(m, true);
  }

  private resubscribeBook(symbol: string): void {
    this.conn.send({ op: 'unsubscribe', channel: 'book', symbol });
    this.conn.send({ op: 'subscribe', channel: 'book', symbol, interval_ms: THROTTLE_MS });
  }

  /**
   * Fetches history newest first: from the newest trade when `fresh`, else on from the oldest
   * fetched, until the chosen interval's window is covered or HISTORY_PAGES pages were read.
   */
  private async fetchHistory(m: Market, fresh: boolean): Promise<void> {
    const gen = ++this.historyGen;
    let since = fresh ? null : m.oldestId;
    if (fresh) m.historyDone = false;
    for (let page = 0, retries = 0; page < HISTORY_PAGES; ) {
      const r = await this.net.tradesDesc(m.symbol, since);
      if (gen !== this.historyGen || this.market !== m) return;
      if (!r.ok) {
        if (r.status === 503 && retries < 5) {
          retries++;
          await new Promise((res) => setTimeout(res, 1000 * retries));
          if (gen !== this.historyGen || this.market !== m) return;
          continue;
        }
        m.historyDone = true;
        this.changed();
        m.setNote(
          r.code === 'store_off'
            ? 'No trade store on this exchange: candles start from live trades.'
            : `No trade history (${r.code}: ${r.message}): candles start from live trades.`,
        );
        return;
      }
      const trades = r.body.trades;
      for (const t of trades) this.addTrade(m, t);
      this.changed();
      const oldest = trades[trades.length - 1];
      if (oldest) {
        m.oldestId = oldest.trade_id;
        m.oldestNs = oldest.time_ns;
      }
      m.setNote('');
      if (r.body.next_since === null || trades.length === 0) {
        m.historyDone = true;
        return;
      }
      if (oldest && oldest.time_ns <= this.historyStartNs()) return;
      since = r.body.next_since;
      page++;
    }
  }

  private addTrade(m: Market, t: Trade): void {
    const b = this.before;
    if (b && t.trade_id <= b.id && t.time_ns > b.timeNs) {
      this.before = null;
      m.reset();
    }
    m.addTrade(t);
  }

  onMessage(raw: unknown, now: number): void {
    if (typeof raw !== 'object' || raw === null) return;
    const msg = raw as { type?: string };
    switch (msg.type) {
      case 'book_snapshot':
      case 'book': {
        const m = this.market;
        const b = msg as BookSnapshotMsg | BookDeltaMsg;
        if (!m || b.symbol !== m.symbol) return;
        if (b.time_ns !== undefined) this.feedDelay.record(now, b.time_ns);
        if (b.type === 'book_snapshot') m.book.applySnapshot(b);
        else if (m.book.applyDelta(b) === 'gap') this.resubscribeBook(m.symbol);
        return;
      }
      case 'trade':
      case 'trades': {
        const m = this.market;
        const batch = msg as TradeMsg | { type: 'trades'; symbol: string; trades: TradeMsg[] };
        if (!m || batch.symbol !== m.symbol) return;
        for (const t of batch.type === 'trades' ? batch.trades : [batch]) {
          this.addTrade(m, {
            trade_id: t.trade_id,
            price: t.price,
            quantity: t.quantity,
            aggressor_side: t.aggressor_side,
            time_ns: t.time_ns ?? now * 1e6,
          });
        }
        return;
      }
      case 'stats_history': {
        const s = msg as { samples: StatsSample[] };
        this.stats.replace(s.samples);
        this.statsState = 'live';
        return;
      }
      case 'stats':
        this.stats.push(msg as StatsSample);
        this.statsState = 'live';
        return;
      case 'error': {
        const e = msg as { code?: string; message?: string };
        const text = `${e.code ?? 'error'}: ${e.message ?? ''}`;
        if (e.code === 'unknown_channel' && (e.message ?? '').includes('stats')) {
          this.statsState = 'unavailable';
          this.stats.version++;
        }
        this.lastError = text;
        this.connVersion++;
        return;
      }
      default:
        return;
    }
  }
}
