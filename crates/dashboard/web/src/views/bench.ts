// The benchmarks view: `rialto bench sweep` runs from the server's directory or uploaded, two
// of them (A and B) drawn as latency (P50, P99, P99.9, log scale) against achieved rate (log
// scale) on the same axes, each knee marked, and a table of each.

import uPlot from 'uplot';
import type { BenchCurve, BenchRun } from '../lib/benchcsv';
import { BenchCsvError, parseBenchCsv } from '../lib/benchcsv';
import { fmtInt } from '../lib/stats';
import { benchRun, benchRuns } from '../net/api';
import { h, onThemeChange, onWidth, setText, theme } from '../dom';

/** A run the user can pick: loaded (parsed) or on the server, fetched when picked. */
interface Entry {
  key: string;
  label: string;
  source: 'server' | 'upload';
  run: BenchRun | null;
  error: string;
}

const PCTS = [
  { key: 'p50_us', label: 'P50', dash: undefined },
  { key: 'p99_us', label: 'P99', dash: [8, 4] },
  { key: 'p999_us', label: 'P99.9', dash: [2, 4] },
] as const;

export class BenchView {
  readonly el: HTMLElement;
  private readonly entries: Entry[] = [];
  private readonly selA: HTMLSelectElement;
  private readonly selB: HTMLSelectElement;
  private readonly upload: HTMLInputElement;
  private readonly messages: HTMLElement;
  private readonly serverNote: HTMLElement;
  private readonly chartEl: HTMLElement;
  private readonly legend: HTMLElement;
  private readonly tables: HTMLElement;
  private plot: uPlot | null = null;
  private dirty = true;
  private loaded = false;

  readonly pending = false;

  /** `wake` asks for a frame once a run was loaded or picked. */
  constructor(private readonly wake: () => void) {
    this.selA = h('select', { id: 'bench-a', 'aria-label': 'Run A' });
    this.selB = h('select', { id: 'bench-b', 'aria-label': 'Run B' });
    for (const s of [this.selA, this.selB]) s.addEventListener('change', () => void this.pick());
    this.upload = h('input', { id: 'bench-upload', type: 'file', accept: '.csv,text/csv', multiple: true });
    this.upload.addEventListener('change', () => void this.onUpload());
    this.messages = h('div', { class: 'messages', role: 'alert' });
    this.serverNote = h('p', { class: 'note' }, 'Looking for runs on the server…');
    this.chartEl = h('div', { id: 'bench-chart', class: 'chart bench', role: 'img', 'aria-label': 'Latency against achieved rate' });
    this.legend = h('div', { class: 'bench-legend' });
    this.tables = h('div', { class: 'bench-tables' });
    this.el = h(
      'section',
      { class: 'view bench', 'aria-label': 'Benchmarks' },
      h(
        'div',
        { class: 'panel' },
        h('h2', {}, 'Benchmark runs'),
        this.serverNote,
        h(
          'div',
          { class: 'toolbar' },
          h('label', {}, 'Run A ', this.selA),
          h('label', {}, 'Run B ', this.selB),
          h('label', { class: 'upload' }, 'Add sweep CSV files ', this.upload),
        ),
        this.messages,
      ),
      h(
        'div',
        { class: 'panel' },
        h('h2', {}, 'Latency against achieved rate'),
        this.legend,
        this.chartEl,
        h('p', { class: 'note' }, 'Both axes logarithmic. Solid P50, dashed P99, dotted P99.9; the ring marks each curve’s knee.'),
      ),
      this.tables,
    );
    onWidth(this.chartEl, (w) => this.plot?.setSize({ width: w, height: 360 }));
    onThemeChange(() => {
      this.plot?.destroy();
      this.plot = null;
      this.dirty = true;
      this.wake();
    });
  }

  /** Lists the server's runs the first time the view is shown. */
  private async loadServerRuns(): Promise<void> {
    const r = await benchRuns();
    if (!r.ok) {
      setText(
        this.serverNote,
        r.code === 'bench_off'
          ? 'The server has no benchmark directory: add sweep CSV files (`rialto bench sweep` output) below.'
          : `Could not list the server’s runs (${r.code}: ${r.message}); add sweep CSV files below.`,
      );
      return;
    }
    const runs = [...r.body.runs].sort((a, b) => b.modified_ns - a.modified_ns);
    setText(
      this.serverNote,
      r.body.configured === false
        ? 'The server has no benchmark directory: add sweep CSV files (`rialto bench sweep` output) below.'
        : runs.length === 0
          ? 'The server’s benchmark directory has no runs yet: add sweep CSV files below.'
          : `${runs.length} run${runs.length > 1 ? 's' : ''} on the server.`,
    );
    for (const run of runs) {
      this.entries.push({ key: `server:${run.name}`, label: run.name, source: 'server', run: null, error: '' });
    }
    this.syncSelects(true);
    await this.pick();
  }

  private async onUpload(): Promise<void> {
    const files = [...(this.upload.files ?? [])];
    const errors: string[] = [];
    let last: Entry | null = null;
    for (const f of files) {
      const name = f.name.replace(/\.csv$/i, '');
      try {
        const run = parseBenchCsv(name, await f.text());
        const key = `upload:${f.name}`;
        const old = this.entries.findIndex((e) => e.key === key);
        const e: Entry = { key, label: `${name} (uploaded)`, source: 'upload', run, error: '' };
        if (old >= 0) this.entries[old] = e;
        else this.entries.push(e);
        last = e;
      } catch (err) {
        errors.push(`${f.name}: ${err instanceof BenchCsvError ? err.message : String(err)}`);
      }
    }
    this.messages.replaceChildren(...errors.map((m) => h('p', { class: 'error' }, m)));
    this.upload.value = '';
    // With nothing picked yet, the defaults (a Rialto run against the reference); else the
    // newest upload goes to B.
    const fresh = !this.selA.value;
    this.syncSelects(fresh);
    if (last && !fresh && this.selA.value !== last.key) this.selB.value = last.key;
    await this.pick();
  }

  private syncSelects(pickDefaults: boolean): void {
    for (const s of [this.selA, this.selB]) {
      const v = s.value;
      s.replaceChildren(
        h('option', { value: '' }, '(none)'),
        ...this.entries.map((e) => h('option', { value: e.key }, e.label)),
      );
      s.value = this.entries.some((e) => e.key === v) ? v : '';
    }
    if (pickDefaults && !this.selA.value && this.entries.length > 0) {
      // A: the newest run that is not the QuickFIX/J reference; B: that reference, or the next.
      const qfj = this.entries.find((e) => /qfj|quickfix/i.test(e.label));
      const a = this.entries.find((e) => e !== qfj) ?? this.entries[0]!;
      const b = qfj && qfj !== a ? qfj : this.entries.find((e) => e !== a);
      this.selA.value = a.key;
      this.selB.value = b ? b.key : '';
    }
  }

  /** Fetches the picked server runs not loaded yet, then redraws. */
  private async pick(): Promise<void> {
    for (const key of [this.selA.value, this.selB.value]) {
      const e = this.entries.find((x) => x.key === key);
      if (!e || e.run || e.source !== 'server') continue;
      const r = await benchRun(e.label);
      if (!r.ok) {
        e.error = `${e.label}: ${r.code}: ${r.message}`;
        continue;
      }
      try {
        e.run = parseBenchCsv(e.label, r.body);
        e.error = '';
      } catch (err) {
        e.error = `${e.label}: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    const errs = [this.selA.value, this.selB.value]
      .map((k) => this.entries.find((x) => x.key === k)?.error ?? '')
      .filter((x) => x !== '');
    if (errs.length > 0) this.messages.replaceChildren(...errs.map((m) => h('p', { class: 'error' }, m)));
    this.dirty = true;
    this.wake();
  }

  private picked(): { tag: string; run: BenchRun; color: string }[] {
    const t = theme();
    const out: { tag: string; run: BenchRun; color: string }[] = [];
    const a = this.entries.find((e) => e.key === this.selA.value)?.run;
    const b = this.entries.find((e) => e.key === this.selB.value)?.run;
    if (a) out.push({ tag: 'A', run: a, color: t.series[0]! });
    if (b && this.selB.value !== this.selA.value) out.push({ tag: 'B', run: b, color: t.series[1]! });
    return out;
  }

  render(): boolean {
    if (!this.loaded) {
      this.loaded = true;
      void this.loadServerRuns();
    }
    if (!this.dirty) return false;
    this.dirty = false;
    const runs = this.picked();
    this.drawChart(runs);
    this.drawTables(runs);
    return true;
  }

  private drawChart(runs: { tag: string; run: BenchRun; color: string }[]): void {
    const t = theme();
    this.plot?.destroy();
    this.plot = null;
    // One table per curve (x = achieved rate, one column per percentile), aligned by uPlot.
    const curves: { tag: string; color: string; run: BenchRun; curve: BenchCurve }[] = [];
    for (const r of runs) for (const c of r.run.curves) curves.push({ tag: r.tag, color: r.color, run: r.run, curve: c });
    this.legend.replaceChildren(
      ...curves.map((c) =>
        h(
          'span',
          { class: 'legend-item' },
          h('span', { class: 'swatch', style: `background:${c.color}` }),
          `${c.tag}: ${c.run.name}${c.run.curves.length > 1 ? ` (${c.curve.bots} bots)` : ''}`,
          c.curve.knee ? ` · knee at ${fmtInt(c.curve.knee.rate_achieved)}/s` : ' · no knee',
        ),
      ),
    );
    if (curves.length === 0) {
      this.chartEl.replaceChildren(h('p', { class: 'note' }, 'Pick a run, or add sweep CSV files.'));
      return;
    }
    this.chartEl.replaceChildren();
    const tables: uPlot.AlignedData[] = curves.map(({ curve }) => {
      // uPlot wants x ascending and unique within a table: past the knee the achieved rate may
      // fall back; keep the first row at each achieved rate.
      const rows = [...curve.rows].sort((p, q) => p.rate_achieved - q.rate_achieved);
      const uniq = rows.filter((r, i) => i === 0 || r.rate_achieved !== rows[i - 1]!.rate_achieved);
      return [uniq.map((r) => r.rate_achieved), ...PCTS.map((p) => uniq.map((r) => Math.max(r[p.key], 0.1)))];
    });
    const data = uPlot.join(tables);
    const series: uPlot.Series[] = [{ label: 'Achieved rate /s' }];
    for (const c of curves) {
      for (const p of PCTS) {
        series.push({
          label: `${c.tag} ${p.label}${c.run.curves.length > 1 ? ` ${c.curve.bots} bots` : ''}`,
          stroke: c.color,
          width: 2,
          dash: p.dash ? [...p.dash] : undefined,
          spanGaps: true,
          points: { show: true, size: 4 },
        });
      }
    }
    const width = Math.max(this.chartEl.clientWidth, 300);
    const knees = curves.filter((c) => c.curve.knee !== null);
    this.plot = new uPlot(
      {
        width,
        height: 360,
        scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
        axes: [
          { label: 'achieved rate (orders/s)', stroke: t.muted, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid }, values: (_u, vs) => vs.map((v) => (v == null ? '' : fmtRate(v))) },
          { label: 'latency µs', stroke: t.muted, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid }, size: 70 },
        ],
        series,
        hooks: {
          draw: [
            (u) => {
              const ctx = u.ctx;
              ctx.save();
              for (const c of knees) {
                const k = c.curve.knee!;
                for (const p of PCTS) {
                  const x = u.valToPos(k.rate_achieved, 'x', true);
                  const y = u.valToPos(Math.max(k[p.key], 0.1), 'y', true);
                  ctx.beginPath();
                  ctx.strokeStyle = c.color;
                  ctx.lineWidth = 2 * devicePixelRatio;
                  ctx.arc(x, y, 7 * devicePixelRatio, 0, 2 * Math.PI);
                  ctx.stroke();
                }
                const x = u.valToPos(k.rate_achieved, 'x', true);
                ctx.fillStyle = c.color;
                ctx.font = `${12 * devicePixelRatio}px system-ui, sans-serif`;
                ctx.textAlign = 'center';
                ctx.fillText(`${c.tag} knee`, x, u.bbox.top + 14 * devicePixelRatio);
                ctx.setLineDash([4 * devicePixelRatio, 4 * devicePixelRatio]);
                ctx.lineWidth = devicePixelRatio;
                ctx.beginPath();
                ctx.moveTo(x, u.bbox.top + 20 * devicePixelRatio);
                ctx.lineTo(x, u.bbox.top + u.bbox.height);
                ctx.stroke();
                ctx.setLineDash([]);
              }
              ctx.restore();
            },
          ],
        },
      },
      data,
      this.chartEl,
    );
  }

  private drawTables(runs: { tag: string; run: BenchRun; color: string }[]): void {
    const cols: [string, (r: BenchRun['rows'][number]) => string][] = [
      ['Offered /s', (r) => fmtInt(r.rate_offered)],
      ['Achieved /s', (r) => fmtInt(r.rate_achieved)],
      ['P50 µs', (r) => r.p50_us.toFixed(1)],
      ['P90 µs', (r) => r.p90_us.toFixed(1)],
      ['P99 µs', (r) => r.p99_us.toFixed(1)],
      ['P99.9 µs', (r) => r.p999_us.toFixed(1)],
      ['P99.99 µs', (r) => r.p9999_us.toFixed(1)],
      ['Max µs', (r) => r.max_us.toFixed(1)],
      ['Acks', (r) => fmtInt(r.acks)],
      ['Fills', (r) => fmtInt(r.fills)],
      ['Rejects', (r) => fmtInt(r.rejects)],
      ['Shed', (r) => fmtInt(r.shed)],
      ['Errors', (r) => fmtInt(r.errors)],
      ['Bots', (r) => fmtInt(r.bots)],
      ['Overloaded', (r) => r.overloaded],
    ];
    this.tables.replaceChildren(
      ...runs.map(({ tag, run, color }) =>
        h(
          'div',
          { class: 'panel' },
          h('h2', {}, h('span', { class: 'swatch', style: `background:${color}` }), `${tag}: ${run.name}`),
          h(
            'div',
            { class: 'scroll' },
            h(
              'table',
              { class: 'bench-table' },
              h('thead', {}, h('tr', {}, ...cols.map(([c], i) => h('th', { class: i === cols.length - 1 ? '' : 'num' }, c)))),
              h(
                'tbody',
                {},
                ...run.rows.map((r) =>
                  h(
                    'tr',
                    { class: r.overloaded === 'knee' ? 'knee' : r.overloaded === 'yes' ? 'over' : '' },
                    ...cols.map(([, f], i) => h('td', { class: i === cols.length - 1 ? '' : 'num' }, f(r))),
                  ),
                ),
              ),
            ),
          ),
        ),
      ),
    );
  }
}

function fmtRate(v: number): string {
  if (v >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (v >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  return String(+v.toFixed(0));
}
