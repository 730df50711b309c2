// `rialto bench sweep`'s CSV: one row per offered rate (and bots count), latency percentiles in
// µs, and `overloaded` = `no` before the knee, `knee` on it, `yes` after. Pure: no DOM. A file
// that is not such a CSV gets a BenchCsvError naming the line, never a crash.

export const COLUMNS = [
  'rate_offered',
  'rate_achieved',
  'p50_us',
  'p90_us',
  'p99_us',
  'p999_us',
  'p9999_us',
  'max_us',
  'sent',
  'acks',
  'fills',
  'rejects',
  'shed',
  'errors',
  'overloaded',
  'bots',
  'runs',
  'steal_ms',
] as const;

type Column = (typeof COLUMNS)[number];
type NumericColumn = Exclude<Column, 'overloaded'>;

export type Overloaded = 'no' | 'knee' | 'yes';

export type BenchRow = Record<NumericColumn, number> & { overloaded: Overloaded; line: number };

/** One curve: the rows of one `bots` count, in the file's order. */
export interface BenchCurve {
  bots: number;
  rows: BenchRow[];
  /** The knee row, when the sweep reached it. */
  knee: BenchRow | null;
}

export interface BenchRun {
  name: string;
  rows: BenchRow[];
  curves: BenchCurve[];
}

export class BenchCsvError extends Error {
  constructor(
    readonly line: number,
    detail: string,
  ) {
    super(`line ${line}: ${detail}`);
    this.name = 'BenchCsvError';
  }
}

/** Parses a sweep CSV; throws BenchCsvError (with the 1-based line) on anything else. */
export function parseBenchCsv(name: string, text: string): BenchRun {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let h = 0;
  while (h < lines.length && lines[h]!.trim() === '') h++;
  if (h >= lines.length) throw new BenchCsvError(1, 'the file is empty');
  const header = lines[h]!.split(',').map((s) => s.trim());
  const index = new Map<string, number>();
  header.forEach((c, i) => index.set(c, i));
  const missing = COLUMNS.filter((c) => !index.has(c));
  if (missing.length > 0) {
    throw new BenchCsvError(
      h + 1,
      `not a bench sweep header: missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
    );
  }
  const rows: BenchRow[] = [];
  for (let i = h + 1; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '') continue;
    const line = i + 1;
    const cells = raw.split(',').map((s) => s.trim());
    if (cells.length !== header.length) {
      throw new BenchCsvError(line, `${cells.length} fields where the header has ${header.length}`);
    }
    const row = { line } as BenchRow;
    for (const c of COLUMNS) {
      const v = cells[index.get(c)!]!;
      if (c === 'overloaded') {
        if (v !== 'no' && v !== 'knee' && v !== 'yes') {
          throw new BenchCsvError(line, `overloaded is "${v}", not no, knee or yes`);
        }
        row.overloaded = v;
      } else {
        const n = v === '' ? NaN : Number(v);
        if (!Number.isFinite(n) || n < 0) {
          throw new BenchCsvError(line, `${c} is "${v}", not a number`);
        }
        row[c] = n;
      }
    }
    rows.push(row);
  }
  if (rows.length === 0) throw new BenchCsvError(h + 1, 'a header and no rows');
  const byBots = new Map<number, BenchRow[]>();
  for (const r of rows) {
    const list = byBots.get(r.bots);
    if (list) list.push(r);
    else byBots.set(r.bots, [r]);
  }
  const curves = [...byBots.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([bots, rs]) => ({ bots, rows: rs, knee: rs.find((r) => r.overloaded === 'knee') ?? null }));
  return { name, rows, curves };
}
