// The dashboard's figures (BENCHMARKS.md, "Web dashboard"): `rialto demo` at a rate, run
// without and with the page open in headless Chromium, interleaved (off, on, on, off, ...),
// each run its own demo process. With the page open, once a second: how long the page's book
// takes to reach the engine's (the REST book's RptSeq, read just before, a few µs behind the
// journal), the feed delay the page measures (arrival minus journal time of book messages),
// and the browser main thread's busy share (Chromium's TaskDuration over wall time). Each
// run's order-entry P50 is the demo's own (FIX order to first execution report).
//
// Usage: node e2e/bench.mjs RIALTO_BINARY [--rate 20000] [--seconds 20] [--rounds 2]
//        [--view market|exchange]
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';

const argv = process.argv.slice(2);
const bin = argv[0];
if (!bin) {
  console.error('usage: node e2e/bench.mjs RIALTO_BINARY [--rate N] [--seconds S] [--rounds R] [--view V]');
  process.exit(2);
}
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i > 0 ? argv[i + 1] : dflt;
};
const rate = Number(opt('rate', 20000));
const seconds = Number(opt('seconds', 20));
const rounds = Number(opt('rounds', 2));
const view = opt('view', 'market');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const browserArgs = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};
const max = (xs) => (xs.length ? Math.max(...xs) : NaN);

/// One demo run; with `browser`, the page open on it. Its P50 and the page's samples.
async function run(browser) {
  const demo = spawn(bin, ['demo', '--rate', String(rate), '--duration', String(seconds),
    '--http-listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let base;
  const started = new Promise((resolve, reject) => {
    demo.stdout.on('data', (d) => {
      out += d.toString();
      const m = out.match(/Dashboard: open (http:\/\/[^/\s]+)\//);
      if (m && !base) {
        base = m[1];
        resolve();
      }
    });
    demo.on('exit', () => reject(new Error(`demo exited early:\n${out}`)));
  });
  let alive = true;
  const exited = new Promise((resolve) => demo.on('exit', () => {
    alive = false;
    resolve();
  }));
  await started;
  const s = { busy: [], bookLagMs: [], feedDelayMs: [], wholeBusy: [] };
  if (browser) {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.goto(`${base}/#/${view}`);
    await page.waitForFunction(() => window.__rialto && window.__rialto.connected);
    await sleep(2000);
    const task = async () => {
      const { metrics } = await cdp.send('Performance.getMetrics');
      return metrics.find((m) => m.name === 'TaskDuration').value;
    };
    let t0 = performance.now();
    let busy0 = await task();
    const [start, startBusy] = [t0, busy0];
    const end = Date.now() + (seconds - 5) * 1000;
    while (alive && Date.now() < end) {
      // How long until the page's book has what the engine's had.
      let book;
      try {
        book = await (await fetch(`${base}/api/v1/book/ACME?depth=1`)).json();
      } catch {
        break; // the run ended
      }
      const asked = performance.now();
      for (;;) {
        const seq = await page.evaluate(() => window.__rialto.book().rpt_seq);
        if (seq >= book.rpt_seq) break;
        if (performance.now() - asked > 10000) break;
        await sleep(20);
      }
      s.bookLagMs.push(performance.now() - asked);
      const d = await page.evaluate(() => window.__rialto.feedDelayMs());
      if (d !== null) s.feedDelayMs.push(d);
      await sleep(1000);
      const t1 = performance.now();
      const busy1 = await task();
      s.busy.push((busy1 - busy0) / ((t1 - t0) / 1000));
      t0 = t1;
      busy0 = busy1;
    }
    s.wholeBusy.push((busy0 - startBusy) / ((t0 - start) / 1000));
    await context.close();
  }
  await exited;
  const p50 = out.match(/^50\.0% : ([0-9.]+)/m);
  if (!p50) throw new Error(`no P50 in the demo's output:\n${out}`);
  return { p50: Number(p50[1]), ...s };
}

const browser = await chromium.launch({ executablePath, headless: true, args: browserArgs });
const off = [];
const on = [];
const page = { busy: [], bookLagMs: [], feedDelayMs: [], wholeBusy: [] };
for (let r = 0; r < rounds; r++) {
  for (const open of r % 2 === 0 ? [false, true] : [true, false]) {
    const x = await run(open ? browser : null);
    (open ? on : off).push(x.p50);
    for (const k of Object.keys(page)) page[k].push(...x[k]);
    console.log(`round ${r + 1}, page ${open ? 'open  ' : 'closed'}: order-entry P50 ${x.p50} µs` +
      (open ? `; book lag median ${median(x.bookLagMs).toFixed(0)} ms, max ${max(x.bookLagMs).toFixed(0)} ms; ` +
        `main thread busy ${(100 * x.wholeBusy[0]).toFixed(0)}% of the run (by second: median ${(100 * median(x.busy)).toFixed(0)}%, max ${(100 * max(x.busy)).toFixed(0)}%)` : ''));
  }
}
await browser.close();
const ratio = median(on) / median(off);
console.log(`rate ${rate}/s, ${seconds} s a run, ${rounds} rounds, view ${view}`);
console.log(`order-entry P50 median: page closed ${median(off)} µs, open ${median(on)} µs: ratio ${ratio.toFixed(2)}`);
console.log(`page's book behind the engine's: median ${median(page.bookLagMs).toFixed(0)} ms, max ${max(page.bookLagMs).toFixed(0)} ms`);
console.log(`feed delay (page-measured): median ${median(page.feedDelayMs).toFixed(0)} ms, max ${max(page.feedDelayMs).toFixed(0)} ms`);
console.log(`browser main thread busy: ${(100 * median(page.wholeBusy)).toFixed(0)}% of a run (median of runs; by second: median ${(100 * median(page.busy)).toFixed(0)}%, max ${(100 * max(page.busy)).toFixed(0)}%)`);
