// The dashboard's entry: the header (venue, navigation, connection state), the stale banner,
// hash routes (#/market, #/exchange, #/bench), one requestAnimationFrame loop that draws the
// view on show from the model at most once a frame, and the test hooks on `window.__rialto`.

import 'uplot/dist/uPlot.min.css';
import './style.css';
import { App } from './app';
import type { Interval } from './lib/candles';
import { fmtTime, h, onThemeChange, setText } from './dom';
import { BenchView } from './views/bench';
import { ExchangeView } from './views/exchange';
import { MarketView } from './views/market';

type Route = 'market' | 'exchange' | 'bench';
const ROUTES: { route: Route; label: string }[] = [
  { route: 'market', label: 'Market' },
  { route: 'exchange', label: 'Exchange' },
  { route: 'bench', label: 'Benchmarks' },
];

/**
 * Frames are drawn on demand: a change in the model asks for one (`wake`), and the next
 * animation frame, at least MIN_FRAME_MS after the last, draws whatever changed since. However
 * fast the feed runs, the page draws at most 20 times a second (figures a person reads, and a
 * main thread left for the messages); with nothing changing, never.
 */
const MIN_FRAME_MS = 50;
let scheduled = false;
let lastFrame = -Infinity;
function wake(): void {
  if (scheduled) return;
  scheduled = true;
  const wait = lastFrame + MIN_FRAME_MS - performance.now();
  if (wait > 1) setTimeout(() => requestAnimationFrame(frame), wait);
  else requestAnimationFrame(frame);
}

const app = new App(wake);
const views = { market: new MarketView(app), exchange: new ExchangeView(app), bench: new BenchView(wake) };

const connDot = h('span', { class: 'dot', 'aria-hidden': 'true' });
const connText = h('span', {}, 'connecting');
const conn = h('div', { class: 'conn', title: 'WebSocket connection' }, connDot, connText);
const links = ROUTES.map(({ route, label }) => h('a', { href: `#/${route}`, 'data-route': route }, label));
const header = h(
  'header',
  {},
  h('h1', {}, h('span', { class: 'venue' }, 'Rialto'), h('span', { class: 'sub' }, ' exchange')),
  h('nav', { 'aria-label': 'Views' }, ...links),
  conn,
);
const banner = h('div', { id: 'stale-banner', role: 'status', 'aria-live': 'polite', hidden: true });
const main = h('main', {});
document.body.append(header, banner, main);

let route: Route = 'market';
function onRoute(): void {
  const r = location.hash.replace(/^#\/?/, '');
  route = ROUTES.some((x) => x.route === r) ? (r as Route) : 'market';
  for (const a of links) {
    if (a.dataset.route === route) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  main.replaceChildren(views[route].el);
  document.title = `Rialto · ${ROUTES.find((x) => x.route === route)!.label}`;
  wake();
}
addEventListener('hashchange', onRoute);
onRoute();

let renders = 0;
let drawnConn = -1;
let lastBannerText = 0;

function drawConn(now: number): void {
  const open = app.connState === 'open';
  if (drawnConn !== app.connVersion) {
    drawnConn = app.connVersion;
    conn.dataset.state = app.connState;
    setText(connText, open ? 'live' : app.connState === 'connecting' ? 'connecting' : 'disconnected');
    conn.title = app.lastError ? `Last server error: ${app.lastError}` : 'WebSocket connection';
    banner.hidden = open;
    lastBannerText = 0;
  }
  // While disconnected, the banner's "last update" ages once a second.
  if (!open && now - lastBannerText > 1000) {
    lastBannerText = now;
    const last = app.conn.lastMessageMs;
    setText(
      banner,
      `Disconnected from the exchange, reconnecting… ${
        last === null ? 'No update received yet.' : `Last update at ${fmtTime(last * 1e6).slice(0, 8)}; what you see may be stale.`
      }`,
    );
  }
}

function frame(now: number): void {
  scheduled = false;
  lastFrame = now;
  drawConn(now);
  if (views[route].render(now)) renders++;
  if (views[route].pending) wake();
}
// What ages with time rather than with messages: the stale banner, the feed delay.
setInterval(wake, 500);
onThemeChange(wake);
wake();

declare global {
  interface Window {
    __rialto: unknown;
  }
}

window.__rialto = {
  get connected(): boolean {
    return app.connState === 'open';
  },
  get symbol(): string {
    return app.symbol;
  },
  book() {
    return app.market?.book.view() ?? { rpt_seq: -1, bids: [], asks: [] };
  },
  trades() {
    return app.market ? app.market.tape.trades.map((t) => ({ ...t })) : [];
  },
  candles(interval: Interval) {
    return app.market ? app.market.candles.series[interval].candles() : [];
  },
  stats() {
    return [...app.stats.samples];
  },
  feedDelayMs(): number | null {
    return app.feedDelay.medianMs(Date.now());
  },
  get renders(): number {
    return renders;
  },
};

void app.start();
