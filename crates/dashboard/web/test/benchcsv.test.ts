import { describe, expect, it } from 'vitest';
import { BenchCsvError, parseBenchCsv } from '../src/lib/benchcsv';
import qfjCsv from '../../../../docs/bench/sweep-qfj-2026-11-23.csv?raw';
import rialtoCsv from '../../../../docs/bench/sweep-2026-11-24.csv?raw';

const HEADER =
  'rate_offered,rate_achieved,p50_us,p90_us,p99_us,p999_us,p9999_us,max_us,sent,acks,fills,rejects,shed,errors,overloaded,bots,runs,steal_ms';

function err(text: string): string {
  try {
    parseBenchCsv('x', text);
  } catch (e) {
    expect(e).toBeInstanceOf(BenchCsvError);
    return (e as Error).message;
  }
  throw new Error('parsed');
}

describe('parseBenchCsv', () => {
  it('reads a sweep with several bots counts, one curve each, knees marked', () => {
    const text = [
      HEADER,
      '5000,5000,19.6,31.0,162.9,432.6,1493.0,1889.3,25000,24942,19538,58,0,0,no,10,3,0',
      '10000,9990,289.0,464.4,1132.5,2793.5,4288.5,4493.3,50000,49822,39172,178,0,0,knee,10,3,50',
      '20000,15000,411.6,618.5,1670.1,2924.5,3422.2,3612.7,100000,99501,78478,499,0,0,yes,10,3,0',
      '5000,5000,25.0,40.0,200.0,500.0,900.0,1000.0,25000,25000,19000,0,0,0,no,2,3,0',
      '',
    ].join('\r\n');
    const run = parseBenchCsv('mixed', text);
    expect(run.name).toBe('mixed');
    expect(run.rows.length).toBe(4);
    expect(run.curves.map((c) => c.bots)).toEqual([2, 10]);
    expect(run.curves[0]!.knee).toBeNull();
    expect(run.curves[0]!.rows.map((r) => r.p99_us)).toEqual([200]);
    const ten = run.curves[1]!;
    expect(ten.rows.map((r) => r.rate_achieved)).toEqual([5000, 9990, 15000]);
    expect(ten.knee!.rate_achieved).toBe(9990);
    expect(ten.knee!.p999_us).toBe(2793.5);
    expect(ten.knee!.line).toBe(3);
    expect(ten.rows[2]!.overloaded).toBe('yes');
  });

  it('reads the committed sweeps', () => {
    const fine = parseBenchCsv('rialto', rialtoCsv);
    expect(fine.curves.length).toBe(1);
    expect(fine.rows.length).toBe(8);
    expect(fine.curves[0]!.knee!.rate_achieved).toBe(250000);
    expect(fine.curves[0]!.knee!.p99_us).toBe(2439.2);
    const qfj = parseBenchCsv('qfj', qfjCsv);
    expect(qfj.curves[0]!.knee!.rate_achieved).toBe(5000);
  });

  it('names the line of what is wrong', () => {
    expect(err('')).toBe('line 1: the file is empty');
    expect(err('a,b,c\n1,2,3\n')).toMatch(/^line 1: not a bench sweep header: missing columns rate_offered, /);
    expect(err(`${HEADER}\n`)).toBe('line 1: a header and no rows');
    expect(err(`${HEADER}\n5000,5000,19.6\n`)).toBe('line 2: 3 fields where the header has 18');
    expect(
      err(`${HEADER}\n\n5000,5000,19.6,31.0,162.9,432.6,1493.0,1889.3,25000,24942,19538,58,0,0,no,10,3,0\n` +
        '10000,10000,fast,31.0,162.9,432.6,1493.0,1889.3,25000,24942,19538,58,0,0,no,10,3,0\n'),
    ).toBe('line 4: p50_us is "fast", not a number');
    expect(
      err(`${HEADER}\n5000,5000,19.6,31.0,162.9,432.6,1493.0,1889.3,25000,24942,19538,58,0,0,maybe,10,3,0\n`),
    ).toBe('line 2: overloaded is "maybe", not no, knee or yes');
  });

  it('takes the columns by name, in any order', () => {
    const cols = HEADER.split(',');
    const vals = '5000,4900,19.6,31.0,162.9,432.6,1493.0,1889.3,25000,24942,19538,58,0,0,knee,10,3,0'.split(',');
    const text = `${[...cols].reverse().join(',')}\n${[...vals].reverse().join(',')}\n`;
    const run = parseBenchCsv('r', text);
    expect(run.rows[0]!.rate_achieved).toBe(4900);
    expect(run.curves[0]!.knee!.p50_us).toBe(19.6);
  });
});
