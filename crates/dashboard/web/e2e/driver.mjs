// Drives the dashboard in Debian's Chromium (headless, playwright-core; no browser download)
// for the Rust tests (crates/server/tests/it/dashboard_browser.rs) and the dashboard benchmark.
// One JSON command a line on stdin, one JSON answer a line on stdout:
//   {"cmd":"open","url":U}             a new page at U; answers once the page is loaded
//   {"cmd":"wait","js":E,"timeout_ms":N} evaluates E in the page until it is truthy; answers
//                                      {"value": its value} or {"error": ...} after N ms
//   {"cmd":"eval","js":E}              E's value once
//   {"cmd":"screenshot","path":P}      a full-page PNG at P
//   {"cmd":"press","key":K}            presses key K (Playwright's names: "Tab", "Enter")
//   {"cmd":"metrics"}                  Chromium's Performance metrics (TaskDuration, ...)
//   {"cmd":"errors"}                   console errors and warnings, page errors so far
//   {"cmd":"close"}                    closes the browser and exits
// CHROMIUM overrides the browser's path (default /usr/bin/chromium).
import { chromium } from 'playwright-core';
import readline from 'node:readline';

const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
// Chromium's own background traffic is refused on a closed network: turn it off.
const args = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let browser;
let page;
let cdp;
const problems = [];

function reply(v) {
  process.stdout.write(JSON.stringify(v) + '\n');
}

async function open(url) {
  browser ??= await chromium.launch({ executablePath, headless: true, args });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') {
      problems.push(`console ${m.type()}: ${m.text()}`);
    }
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  await page.goto(url, { waitUntil: 'load' });
  return { ok: true };
}

async function waitFor(js, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await page.evaluate(js);
      if (last) return { value: last };
    } catch (e) {
      last = `threw: ${e.message}`;
    }
    if (Date.now() > deadline) return { error: `not true within ${timeoutMs} ms: ${js} (last: ${JSON.stringify(last)})` };
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function handle(c) {
  switch (c.cmd) {
    case 'open':
      return open(c.url);
    case 'wait':
      return waitFor(c.js, c.timeout_ms ?? 20000);
    case 'eval':
      return { value: await page.evaluate(c.js) };
    case 'press':
      await page.keyboard.press(c.key);
      return { ok: true };
    case 'screenshot':
      await page.screenshot({ path: c.path, fullPage: true });
      return { ok: true };
    case 'metrics': {
      const { metrics } = await cdp.send('Performance.getMetrics');
      return { value: Object.fromEntries(metrics.map((m) => [m.name, m.value])) };
    }
    case 'errors':
      return { value: problems };
    case 'close':
      await browser?.close();
      reply({ ok: true });
      process.exit(0);
    default:
      return { error: `unknown command ${JSON.stringify(c.cmd)}` };
  }
}

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let answer;
  try {
    answer = await handle(JSON.parse(line));
  } catch (e) {
    answer = { error: String(e && e.stack ? e.stack : e) };
  }
  reply(answer);
}
await browser?.close();
