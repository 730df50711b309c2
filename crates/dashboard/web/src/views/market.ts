// The market view: instrument and interval selectors, the ladder, the tape, the candle chart
// (lightweight-charts) and the depth chart (uPlot). `render` runs once a frame and redraws only
// what changed since the last frame.

import {
  CandlestickSeries,
  ColorType,
  createChart,
  HistogramSeries,
  TickMarkType,
  type IChartApi,
  type ISeriesApi,
  type Time,
  type UTCTimestamp,
} from 'lightweight-charts';
import uPlot from 'uplot';
import type { App, Market } from '../app';
import { TAPE_LEN } from '../app';
import { INTERVALS, type Candle, type Interval } from '../lib/candles';
import { depth } from '../lib/depth';
import { fmtTime, h, onThemeChange, onWidth, setText, theme } from '../dom';

/** Levels a side in the ladder and in the depth chart. */
const LADDER_LEVELS = 15;
const DEPTH_LEVELS = 50;
const DEPTH_EVERY_MS = 200;
const CANDLE_EVERY_MS = 250;
/** Candles in view when the chart is framed (an interval or instrument picked). */
const CANDLES_SHOWN = 120;

interface LadderRow {
  tr: HTMLTableRowElement;
  price: HTMLTableCellElement;
  qty: HTMLTableCellElement;
  orders: HTMLTableCellElement;
}

interface TapeRow {
  tr: HTMLTableRowElement;
  time: HTMLTableCellElement;
  price: HTMLTableCellElement;
  qty: HTMLTableCellElement;
  side: HTMLTableCellElement;
  id: number;
}

const INTERVAL_LABELS: Record<Interval, string> = { '1s': '1 second', '1m': '1 minute', '5m': '5 minutes' };

export class MarketView {
  readonly el: HTMLElement;
  private readonly symbolSel: HTMLSelectElement;
  private readonly intervalSel: HTMLSelectElement;
  private readonly bidRows: LadderRow[] = [];
  private readonly askRows: LadderRow[] = [];
  private readonly spreadCell: HTMLTableCellElement;
  /** The tape's rows in document order. */
  private readonly tapeRows: TapeRow[] = [];
  private readonly tapeBody: HTMLTableSectionElement;
  private readonly summary: Record<'bid' | 'ask' | 'spread' | 'last' | 'delay', HTMLElement>;
  private readonly note: HTMLElement;
  private readonly candleEl: HTMLElement;
  private readonly depthEl: HTMLElement;
  private chart: IChartApi | null = null;
  private candleSeries: ISeriesApi<'Candlestick'> | null = null;
  private volumeSeries: ISeriesApi<'Histogram'> | null = null;
  private depthPlot: uPlot | null = null;
  /** What the charts and tables show, to skip a frame's work when nothing moved. */
  private drawn = { market: null as Market | null, interval: '' as string, tape: -1, note: -1, instruments: -1 };
  private lastDelayDraw = 0;
  private depthPending = false;
  private candlePending = false;
  private lastCandleDraw = -Infinity;
  /** Frame the candle chart on its latest candles at the next full redraw. */
  private fitCandles = true;
  private fittedCount = 0;
  private lastDepthDraw = -Infinity;
  private t = theme();

  constructor(private readonly app: App) {
    this.symbolSel = h('select', { id: 'symbol', 'aria-label': 'Instrument' });
    this.symbolSel.addEventListener('change', () => app.selectSymbol(this.symbolSel.value));
    this.intervalSel = h('select', { id: 'interval', 'aria-label': 'Candle interval' });
    for (const iv of INTERVALS) {
      this.intervalSel.append(h('option', { value: iv, selected: iv === app.interval }, INTERVAL_LABELS[iv]));
    }
    this.intervalSel.addEventListener('change', () => app.selectInterval(this.intervalSel.value as Interval));

    const stat = (label: string, cls = '') => {
      const v = h('span', { class: `num ${cls}` }, '–');
      return { wrap: h('span', { class: 'summary-item' }, h('span', { class: 'label' }, label), v), v };
    };
    const bid = stat('Bid', 'bid');
    const ask = stat('Ask', 'ask');
    const spread = stat('Spread');
    const last = stat('Last');
    const delay = stat('Feed delay');
    delay.wrap.title = 'Arrival time of book messages minus their journal time, median over the last second';
    this.summary = { bid: bid.v, ask: ask.v, spread: spread.v, last: last.v, delay: delay.v };

    const toolbar = h(
      'div',
      { class: 'toolbar' },
      h('label', {}, 'Instrument ', this.symbolSel),
      h('label', {}, 'Candles ', this.intervalSel),
      h('div', { class: 'summary', 'aria-live': 'off' }, bid.wrap, ask.wrap, spread.wrap, last.wrap, delay.wrap),
    );

    // The ladder: asks above (worst at the top, best next to the spread), bids below.
    const tbody = h('tbody');
    const mkRow = (side: 'bid' | 'ask'): LadderRow => {
      const price = h('td', { 'data-col': 'price', class: `num ${side}` });
      const qty = h('td', { 'data-col': 'qty', class: 'num bar' });
      const orders = h('td', { 'data-col': 'orders', class: 'num' });
      const tr = h('tr', { 'data-side': side, class: side }, price, qty, orders);
      return { tr, price, qty, orders };
    };
    for (let i = 0; i < LADDER_LEVELS; i++) this.askRows.push(mkRow('ask'));
    for (let i = LADDER_LEVELS - 1; i >= 0; i--) tbody.append(this.askRows[i]!.tr);
    this.spreadCell = h('td', { colspan: 3, class: 'spread num' }, '');
    tbody.append(h('tr', { class: 'spread-row' }, this.spreadCell));
    for (let i = 0; i < LADDER_LEVELS; i++) {
      this.bidRows.push(mkRow('bid'));
      tbody.append(this.bidRows[i]!.tr);
    }
    const ladder = h(
      'table',
      { class: 'ladder', 'aria-label': 'Order book' },
      h('thead', {}, h('tr', {}, h('th', { class: 'num' }, 'Price'), h('th', { class: 'num' }, 'Size'), h('th', { class: 'num' }, 'Orders'))),
      tbody,
    );

    const tapeBody = (this.tapeBody = h('tbody'));
    for (let i = 0; i < TAPE_LEN; i++) {
      const time = h('td', { class: 'num time' });
      const price = h('td', { 'data-col': 'price', class: 'num' });
      const qty = h('td', { 'data-col': 'qty', class: 'num' });
      const side = h('td', { 'data-col': 'side' });
      const tr = h('tr', { hidden: true }, time, price, qty, side);
      tapeBody.append(tr);
      this.tapeRows.push({ tr, time, price, qty, side, id: -1 });
    }
    const tape = h(
      'table',
      { class: 'tape', 'aria-label': 'Trades' },
      h(
        'thead',
        {},
        h('tr', {}, h('th', { class: 'num' }, 'Time'), h('th', { class: 'num' }, 'Price'), h('th', { class: 'num' }, 'Qty'), h('th', {}, 'Side')),
      ),
      tapeBody,
    );

    this.candleEl = h('div', { id: 'candle-chart', class: 'chart candles', role: 'img', 'aria-label': 'Price candles and volume' });
    this.note = h('p', { class: 'note', hidden: true });
    this.depthEl = h('div', { id: 'depth-chart', class: 'chart depth', role: 'img', 'aria-label': 'Depth: cumulative size by price' });

    this.el = h(
      'section',
      { class: 'view market', 'aria-label': 'Market' },
      toolbar,
      h(
        'div',
        { class: 'market-grid' },
        h('div', { class: 'panel ladder-panel' }, h('h2', {}, 'Book'), ladder),
        h(
          'div',
          { class: 'panel charts-panel' },
          h('h2', {}, 'Price'),
          this.candleEl,
          this.note,
          h('h2', {}, 'Depth'),
          this.depthEl,
        ),
        h('div', { class: 'panel tape-panel' }, h('h2', {}, 'Trades'), tape),
      ),
    );
    onThemeChange(() => this.applyTheme());
  }

  /** Whether a throttled part waits to be drawn (the next frame should come anyway). */
  get pending(): boolean {
    return this.depthPending || this.candlePending;
  }

  /** Builds the charts (once the view is in the document, so they have a size). */
  private ensureCharts(): void {
    if (this.chart) return;
    const t = (this.t = theme());
    this.chart = createChart(this.candleEl, {
      autoSize: true,
      layout: { background: { type: ColorType.Solid, color: t.bg }, textColor: t.fg, fontFamily: 'inherit' },
      grid: { vertLines: { color: t.grid }, horzLines: { color: t.grid } },
      timeScale: { timeVisible: true, secondsVisible: true, tickMarkFormatter: tickMark },
      localization: { timeFormatter: (time: Time) => fmtTime(Number(time) * 1e9).slice(0, 8) },
      rightPriceScale: { borderColor: t.grid },
    });
    this.candleSeries = this.chart.addSeries(CandlestickSeries, {
      upColor: t.bid,
      downColor: t.ask,
      wickUpColor: t.bid,
      wickDownColor: t.ask,
      borderVisible: false,
    });
    this.candleSeries.priceScale().applyOptions({ scaleMargins: { top: 0.08, bottom: 0.28 } });
    this.volumeSeries = this.chart.addSeries(HistogramSeries, {
      priceFormat: { type: 'volume' },
      priceScaleId: 'volume',
      lastValueVisible: false,
      priceLineVisible: false,
    });
    this.chart.priceScale('volume').applyOptions({ scaleMargins: { top: 0.78, bottom: 0 } });

    const opts: uPlot.Options = {
      width: Math.max(this.depthEl.clientWidth, 200),
      height: this.depthEl.clientHeight || 220,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.05)] } },
      axes: [
        { stroke: t.muted, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid } },
        { stroke: t.muted, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid }, size: 60 },
      ],
      series: [
        {},
        { label: 'Bids', stroke: t.bid, fill: `${t.bid}33`, width: 2, paths: uPlot.paths.stepped!({ align: -1 }), points: { show: false } },
        { label: 'Asks', stroke: t.ask, fill: `${t.ask}33`, width: 2, paths: uPlot.paths.stepped!({ align: 1 }), points: { show: false } },
      ],
    };
    this.depthPlot = new uPlot(opts, [[], [], []], this.depthEl);
    onWidth(this.depthEl, (w) => this.depthPlot?.setSize({ width: w, height: this.depthEl.clientHeight || 220 }));
  }

  private applyTheme(): void {
    if (!this.chart) return;
    // Rebuilding is the simplest way to recolour both charts; it happens only on a theme switch.
    this.chart.remove();
    this.chart = null;
    this.depthPlot?.destroy();
    this.depthPlot = null;
    this.drawn.market = null;
    this.ensureCharts();
  }

  private syncInstruments(): void {
    const app = this.app;
    if (this.drawn.instruments === app.instrumentsVersion) return;
    this.drawn.instruments = app.instrumentsVersion;
    this.symbolSel.replaceChildren(...app.instruments.map((i) => h('option', { value: i.symbol }, i.symbol)));
    this.symbolSel.value = app.symbol;
  }

  /** Draws what changed; returns whether anything was drawn. */
  render(now: number): boolean {
    this.ensureCharts();
    this.syncInstruments();
    const app = this.app;
    const m = app.market;
    if (!m) return false;
    let did = false;
    const newMarket = this.drawn.market !== m;
    if (newMarket) {
      this.drawn.market = m;
      this.drawn.tape = -1;
      this.drawn.note = -1;
      this.drawn.interval = '';
      this.symbolSel.value = m.symbol;
      const inst = app.instruments.find((i) => i.symbol === m.symbol);
      if (inst) {
        this.candleSeries?.applyOptions({
          priceFormat: { type: 'price', precision: inst.price_decimals, minMove: Number(inst.tick_size) },
        });
      }
      m.book.dirtyBid = 0;
      m.book.dirtyAsk = 0;
      this.lastDepthDraw = -Infinity;
    }
    if (m.book.dirtyWithin(DEPTH_LEVELS)) {
      if (m.book.dirtyWithin(LADDER_LEVELS)) {
        this.drawLadder(m);
        did = true;
      }
      this.depthPending = true;
      m.book.clearDirty();
    }
    // The depth chart is a shape, not figures to read: five times a second is enough.
    if (this.depthPending && now - this.lastDepthDraw >= DEPTH_EVERY_MS) {
      this.depthPending = false;
      this.lastDepthDraw = now;
      this.drawDepth(m);
      did = true;
    }
    if (this.drawn.tape !== m.tape.version) {
      this.drawn.tape = m.tape.version;
      this.drawTape(m);
      did = true;
    }
    if (this.drawCandles(m, now)) did = true;
    if (this.drawn.note !== m.noteVersion) {
      this.drawn.note = m.noteVersion;
      setText(this.note, m.historyNote);
      this.note.hidden = m.historyNote === '';
    }
    if (now - this.lastDelayDraw > 250) {
      this.lastDelayDraw = now;
      const d = app.feedDelay.medianMs(Date.now());
      setText(this.summary.delay, d === null ? '–' : `${d.toFixed(d < 10 ? 1 : 0)} ms`);
    }
    return did;
  }

  private drawLadder(m: Market): void {
    const bids = m.book.bids;
    const asks = m.book.asks;
    let maxQty = 0;
    for (let i = 0; i < LADDER_LEVELS; i++) {
      const b = bids.level(i);
      const a = asks.level(i);
      if (b) maxQty = Math.max(maxQty, Number(b.qty));
      if (a) maxQty = Math.max(maxQty, Number(a.qty));
    }
    const fill = (rows: LadderRow[], side: typeof bids) => {
      for (let i = 0; i < LADDER_LEVELS; i++) {
        const r = rows[i]!;
        const l = side.level(i);
        if (!l) {
          if (r.tr.hasAttribute('data-price')) {
            r.tr.removeAttribute('data-price');
            r.price.textContent = '';
            r.qty.textContent = '';
            r.orders.textContent = '';
            r.qty.style.removeProperty('--w');
          }
          continue;
        }
        if (r.tr.getAttribute('data-price') !== l.price) r.tr.setAttribute('data-price', l.price);
        setText(r.price, l.price);
        setText(r.qty, l.qty);
        setText(r.orders, String(l.orders));
        const w = maxQty > 0 ? `${Math.round((Number(l.qty) / maxQty) * 100)}%` : '0%';
        if (r.qty.style.getPropertyValue('--w') !== w) r.qty.style.setProperty('--w', w);
      }
    };
    fill(this.bidRows, bids);
    fill(this.askRows, asks);
    const bb = bids.level(0);
    const ba = asks.level(0);
    setText(this.summary.bid, bb ? `${bb.qty} @ ${bb.price}` : '–');
    setText(this.summary.ask, ba ? `${ba.price} @ ${ba.qty}` : '–');
    const inst = this.app.instruments.find((i) => i.symbol === m.symbol);
    const dec = inst?.price_decimals ?? 2;
    const spread = bb && ba ? (Number(ba.price) - Number(bb.price)).toFixed(dec) : '';
    setText(this.summary.spread, spread || '–');
    setText(this.spreadCell, !m.book.synced ? 'waiting for the book…' : spread ? `spread ${spread}` : '');
  }

  private drawDepth(m: Market): void {
    if (!this.depthPlot) return;
    const d = depth(m.book.bids.top(DEPTH_LEVELS), m.book.asks.top(DEPTH_LEVELS), DEPTH_LEVELS);
    this.depthPlot.setData([d.x, d.bid, d.ask] as uPlot.AlignedData);
  }

  private drawTape(m: Market): void {
    const trades = m.tape.trades;
    const rows = this.tapeRows;
    // The usual case: k new trades on top of those shown. Move the k bottom rows to the top
    // and fill only those, rather than rewriting all fifty.
    const topId = rows[0]!.id;
    let k = 0;
    while (k < trades.length && trades[k]!.trade_id > topId) k++;
    let shifted = topId !== -1 && k > 0 && k < TAPE_LEN;
    for (let i = 0; shifted && i + k < trades.length; i++) {
      if (rows[i]!.id !== trades[i + k]!.trade_id) shifted = false;
    }
    if (shifted) {
      const moved = rows.splice(TAPE_LEN - k, k);
      rows.unshift(...moved);
      const frag = document.createDocumentFragment();
      for (const r of moved) frag.append(r.tr);
      this.tapeBody.prepend(frag);
    }
    for (let i = 0; i < TAPE_LEN; i++) {
      const r = rows[i]!;
      const t = trades[i];
      if (!t) {
        if (r.id !== -1) {
          r.id = -1;
          r.tr.hidden = true;
          r.tr.removeAttribute('data-trade-id');
        }
        continue;
      }
      if (r.id === t.trade_id) continue;
      r.id = t.trade_id;
      r.tr.hidden = false;
      r.tr.setAttribute('data-trade-id', String(t.trade_id));
      r.tr.className = t.aggressor_side === 'buy' ? 'buy' : 'sell';
      setText(r.time, fmtTime(t.time_ns));
      setText(r.price, t.price);
      setText(r.qty, t.quantity);
      setText(r.side, t.aggressor_side);
    }
    const last = trades[0];
    setText(this.summary.last, last ? `${last.price} × ${last.quantity}` : '–');
  }

  private drawCandles(m: Market, now: number): boolean {
    const iv = this.app.interval;
    const s = m.candles.series[iv];
    if (this.drawn.interval !== iv) {
      this.drawn.interval = iv;
      this.lastCandleDraw = -Infinity;
      this.fitCandles = true;
      this.fittedCount = 0;
      s.markReset();
      this.chart?.timeScale().applyOptions({ secondsVisible: iv === '1s' });
    }
    if (!s.dirty || !this.candleSeries || !this.volumeSeries) return false;
    // A candle redraws the whole chart: four times a second is live enough.
    if (now - this.lastCandleDraw < CANDLE_EVERY_MS) {
      this.candlePending = true;
      return false;
    }
    this.candlePending = false;
    this.lastCandleDraw = now;
    const t = this.t;
    const ch = s.takeChanges();
    const vol = (c: Candle) => ({
      time: c.time as UTCTimestamp,
      value: c.volume,
      color: c.close >= c.open ? `${t.bid}88` : `${t.ask}88`,
    });
    const bar = (c: Candle) => ({ time: c.time as UTCTimestamp, open: c.open, high: c.high, low: c.low, close: c.close });
    if (ch.reset) {
      const all = s.candles();
      this.candleSeries.setData(all.map(bar));
      this.volumeSeries.setData(all.map(vol));
      const n = all.length;
      // Frame again when history filled a chart framed on a few live candles.
      const grew = this.fittedCount < CANDLES_SHOWN && n > this.fittedCount + 1;
      if ((this.fitCandles || grew) && n > 0) {
        this.fitCandles = false;
        this.fittedCount = n;
        // A few candles keep the default width (fitting them would make slabs).
        if (n > CANDLES_SHOWN) this.chart?.timeScale().setVisibleLogicalRange({ from: n - CANDLES_SHOWN, to: n + 2 });
        else if (n >= 30) this.chart?.timeScale().fitContent();
        else this.chart?.timeScale().scrollToRealTime();
      }
    } else {
      for (const time of ch.updated) {
        const c = s.find(time);
        if (!c) continue;
        this.candleSeries.update(bar(c));
        this.volumeSeries.update(vol(c));
      }
    }
    return true;
  }
}

/** The time axis in local time: dates for day marks, HH:MM(:SS) within a day. */
function tickMark(time: Time, type: TickMarkType): string {
  const d = new Date(Number(time) * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  switch (type) {
    case TickMarkType.Year:
      return String(d.getFullYear());
    case TickMarkType.Month:
      return d.toLocaleString(undefined, { month: 'short' });
    case TickMarkType.DayOfMonth:
      return `${d.getDate()} ${d.toLocaleString(undefined, { month: 'short' })}`;
    case TickMarkType.Time:
      return `${p(d.getHours())}:${p(d.getMinutes())}`;
    default:
      return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  }
}
