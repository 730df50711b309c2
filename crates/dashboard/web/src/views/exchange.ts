// The exchange view: rates and ack latency over the last ten minutes on one time axis (two
// stacked uPlot charts, their x scales and cursors synced: rates above, latency below on a log
// scale), and tiles of the latest sample.

import uPlot from 'uplot';
import type { App } from '../app';
import { fmtInt, type StatsSample } from '../lib/stats';
import { h, onThemeChange, onWidth, setText, theme } from '../dom';

interface Tile {
  key: string;
  label: string;
  value: (s: StatsSample) => string;
  sub?: (s: StatsSample) => string;
  /** Marks the tile as a warning when true (shedding, lag...). */
  warn?: (s: StatsSample) => boolean;
}

/** A follower's lag in journal records; "off" when that follower does not run. */
const lag = (records: number | null) =>
  records === null ? 'off' : `${fmtInt(records)} record${records === 1 ? '' : 's'}`;

/** Latency on a log scale: a 0 µs sample (below the clock's resolution) is drawn at 1 µs. */
const logSafe = (xs: (number | null)[]) => xs.map((v) => (v === null ? null : Math.max(v, 1)));

const TILES: Tile[] = [
  { key: 'orders', label: 'Orders in', value: (s) => `${fmtInt(s.rates.orders)}/s`, sub: (s) => `${fmtInt(s.totals.orders)} total` },
  { key: 'reports', label: 'Reports out', value: (s) => `${fmtInt(s.rates.reports)}/s`, sub: (s) => `${fmtInt(s.totals.reports)} total` },
  { key: 'trades', label: 'Trades', value: (s) => `${fmtInt(s.rates.trades)}/s`, sub: (s) => `${fmtInt(s.totals.trades)} total` },
  { key: 'md_messages', label: 'Market data', value: (s) => `${fmtInt(s.rates.md_messages)}/s`, sub: (s) => `WebSocket ${fmtInt(s.rates.ws_messages)}/s` },
  { key: 'ack_p50', label: 'Ack latency P50', value: (s) => us(s.ack_latency_us.p50), sub: (s) => `${fmtInt(s.ack_latency_us.count)} acks` },
  { key: 'ack_p99', label: 'Ack latency P99', value: (s) => us(s.ack_latency_us.p99) },
  { key: 'ack_p999', label: 'Ack latency P99.9', value: (s) => us(s.ack_latency_us.p999) },
  { key: 'fix_sessions', label: 'FIX sessions', value: (s) => fmtInt(s.connections.fix_sessions) },
  { key: 'fix_connections', label: 'FIX connections', value: (s) => fmtInt(s.connections.fix_connections) },
  { key: 'md_sessions', label: 'Market-data sessions', value: (s) => fmtInt(s.connections.md_sessions) },
  { key: 'http', label: 'HTTP connections', value: (s) => fmtInt(s.connections.http) },
  { key: 'ws', label: 'WebSocket clients', value: (s) => fmtInt(s.connections.ws) },
  {
    key: 'shed',
    label: 'Shed',
    value: (s) => `${fmtInt(s.rates.shed)}/s`,
    sub: (s) => `${fmtInt(s.totals.shed)} total`,
    warn: (s) => s.rates.shed > 0,
  },
  {
    key: 'throttled',
    label: 'Throttled',
    value: (s) => `${fmtInt(s.rates.throttled)}/s`,
    sub: (s) => `${fmtInt(s.totals.throttled)} total`,
    warn: (s) => s.rates.throttled > 0,
  },
  { key: 'journal_last_seq', label: 'Journal last seq', value: (s) => fmtInt(s.journal.last_seq) },
  {
    key: 'market_data_lag',
    label: 'Market-data lag',
    value: (s) => lag(s.lag.market_data_records),
    warn: (s) => s.lag.market_data_records > 10_000,
  },
  { key: 'snapshot_lag', label: 'Snapshot lag', value: (s) => lag(s.lag.snapshot_records) },
  {
    key: 'store_lag',
    label: 'Store lag',
    value: (s) => lag(s.lag.store_records),
    sub: (s) => (s.lag.store_ms === null ? '' : `${fmtInt(s.lag.store_ms)} ms`),
    warn: (s) => (s.lag.store_ms ?? 0) > 5_000,
  },
];

function us(v: number | null): string {
  return v === null ? '–' : `${fmtInt(v)} µs`;
}

const RATE_LABELS = ['Orders in/s', 'Reports out/s', 'Trades/s', 'Market data msgs/s'];
const LAT_LABELS = ['Ack P50 µs', 'Ack P99 µs', 'Ack P99.9 µs'];

export class ExchangeView {
  readonly el: HTMLElement;
  private readonly chartEl: HTMLElement;
  private readonly status: HTMLElement;
  private readonly tiles: { t: Tile; el: HTMLElement; value: HTMLElement; sub: HTMLElement }[] = [];
  private rates: uPlot | null = null;
  private latency: uPlot | null = null;
  private drawn = -1;
  private width = 0;

  constructor(private readonly app: App) {
    this.chartEl = h('div', { id: 'rates-chart', class: 'chart rates', role: 'img', 'aria-label': 'Rates and ack latency over time' });
    this.status = h('p', { class: 'note', role: 'status' }, 'Waiting for the first statistics…');
    const grid = h('div', { class: 'tiles' });
    for (const t of TILES) {
      const value = h('div', { class: 'value num', 'data-stat': t.key }, '–');
      const sub = h('div', { class: 'sub num' }, '');
      const el = h('div', { class: 'tile' }, h('div', { class: 'label' }, t.label), value, sub);
      grid.append(el);
      this.tiles.push({ t, el, value, sub });
    }
    this.el = h(
      'section',
      { class: 'view exchange', 'aria-label': 'Exchange' },
      h('div', { class: 'panel' }, h('h2', {}, 'Rates and ack latency (last 10 minutes)'), this.status, this.chartEl),
      h('div', { class: 'panel' }, h('h2', {}, 'Now'), grid),
    );
    onThemeChange(() => this.rebuild());
  }

  private rebuild(): void {
    this.rates?.destroy();
    this.latency?.destroy();
    this.rates = null;
    this.latency = null;
    this.drawn = -1;
  }

  readonly pending = false;

  private ensureCharts(): void {
    if (this.rates) return;
    const t = theme();
    const width = Math.max(this.chartEl.clientWidth, 300);
    this.width = width;
    const axis = (label: string): uPlot.Axis => ({
      label,
      stroke: t.muted,
      grid: { stroke: t.grid, width: 1 },
      ticks: { stroke: t.grid },
      size: 70,
    });
    const xAxis: uPlot.Axis = { stroke: t.muted, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid } };
    const sync = uPlot.sync('rialto-stats');
    const cursor: uPlot.Cursor = { sync: { key: sync.key, setSeries: false }, drag: { x: true, y: false } };
    this.rates = new uPlot(
      {
        width,
        height: 220,
        cursor,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(10, max * 1.1)] } },
        axes: [xAxis, axis('per second')],
        series: [
          { label: 'Time' },
          ...RATE_LABELS.map((label, i) => ({ label, stroke: t.series[i]!, width: 2, points: { show: false } })),
        ],
      },
      [[], [], [], [], []],
      this.chartEl,
    );
    this.latency = new uPlot(
      {
        width,
        height: 200,
        cursor,
        scales: { x: { time: true }, y: { distr: 3 } },
        axes: [xAxis, axis('µs (log)')],
        series: [
          { label: 'Time' },
          ...LAT_LABELS.map((label, i) => ({
            label,
            stroke: t.series[4 + i]!,
            width: 2,
            dash: i === 0 ? undefined : i === 1 ? [6, 3] : [2, 3],
            points: { show: false },
            spanGaps: false,
          })),
        ],
      },
      [[], [], [], []],
      this.chartEl,
    );
    sync.sub(this.rates);
    sync.sub(this.latency);
    onWidth(this.chartEl, (w) => {
      if (w === this.width) return;
      this.width = w;
      this.rates?.setSize({ width: w, height: 220 });
      this.latency?.setSize({ width: w, height: 200 });
    });
  }

  render(): boolean {
    this.ensureCharts();
    const st = this.app.stats;
    if (this.drawn === st.version) return false;
    this.drawn = st.version;
    const state = this.app.statsState;
    setText(
      this.status,
      state === 'unavailable'
        ? 'This exchange does not publish statistics (no stats channel).'
        : st.samples.length === 0
          ? 'Waiting for the first statistics…'
          : '',
    );
    this.status.hidden = this.status.textContent === '';
    const [x, o, r, tr, md, p50, p99, p999] = st.series();
    this.rates!.setData([x, o, r, tr, md]);
    this.latency!.setData([x, logSafe(p50), logSafe(p99), logSafe(p999)] as uPlot.AlignedData);
    const s = st.latest;
    if (s) {
      for (const tile of this.tiles) {
        setText(tile.value, tile.t.value(s));
        setText(tile.sub, tile.t.sub ? tile.t.sub(s) : '');
        tile.el.classList.toggle('warn', tile.t.warn ? tile.t.warn(s) : false);
      }
    }
    return true;
  }
}
