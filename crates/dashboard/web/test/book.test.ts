import { describe, expect, it } from 'vitest';
import { Book, type BookDeltaMsg, type BookSnapshotMsg } from '../src/lib/book';

const snap: BookSnapshotMsg = {
  type: 'book_snapshot',
  symbol: 'ACME',
  rpt_seq: 10,
  // Deliberately not best first: the model sorts.
  bids: [
    ['99.95', '640', 2],
    ['99.97', '690', 3],
    ['99.96', '122', 1],
  ],
  asks: [
    ['100.07', '507', 2],
    ['100.05', '888', 3],
  ],
  time_ns: 1_000_000_000,
};

function delta(first: number, last: number, bids: BookDeltaMsg['bids'], asks: BookDeltaMsg['asks']): BookDeltaMsg {
  return { type: 'book', symbol: 'ACME', first_rpt_seq: first, rpt_seq: last, bids, asks };
}

describe('Book', () => {
  it('orders a snapshot best first on each side', () => {
    const b = new Book('ACME');
    expect(b.applySnapshot(snap)).toBe('applied');
    expect(b.view()).toEqual({
      rpt_seq: 10,
      bids: [
        ['99.97', '690', 3],
        ['99.96', '122', 1],
        ['99.95', '640', 2],
      ],
      asks: [
        ['100.05', '888', 3],
        ['100.07', '507', 2],
      ],
    });
    expect(b.timeNs).toBe(1_000_000_000);
  });

  it('applies deltas: replace, insert, delete, and a delete then re-add in one message', () => {
    const b = new Book('ACME');
    b.applySnapshot(snap);
    b.clearDirty();
    expect(
      b.applyDelta(
        delta(11, 14, [
          ['99.97', '651', 3],
          ['99.96', '0', 0],
          ['99.96', '376', 1],
          ['99.98', '5', 1],
        ], [
          ['100.05', '0', 0],
          ['100.06', '216', 1],
        ]),
      ),
    ).toBe('applied');
    expect(b.view()).toEqual({
      rpt_seq: 14,
      bids: [
        ['99.98', '5', 1],
        ['99.97', '651', 3],
        ['99.96', '376', 1],
        ['99.95', '640', 2],
      ],
      asks: [
        ['100.06', '216', 1],
        ['100.07', '507', 2],
      ],
    });
    // The new best bid and the deleted best ask: both sides changed from their top.
    expect(b.dirtyBid).toBe(0);
    expect(b.dirtyAsk).toBe(0);
    expect(b.view(1)).toEqual({ rpt_seq: 14, bids: [['99.98', '5', 1]], asks: [['100.06', '216', 1]] });
  });

  it('marks only the depth that changed', () => {
    const b = new Book('ACME');
    b.applySnapshot(snap);
    b.clearDirty();
    b.applyDelta(delta(11, 11, [['99.95', '1', 1]], []));
    expect(b.dirtyBid).toBe(2);
    expect(b.dirtyAsk).toBe(Infinity);
    expect(b.dirtyWithin(2)).toBe(false);
    expect(b.dirtyWithin(3)).toBe(true);
    b.clearDirty();
    expect(b.dirtyWithin(1000)).toBe(false);
  });

  it('deleting a level that is not there changes nothing', () => {
    const b = new Book('ACME');
    b.applySnapshot(snap);
    b.clearDirty();
    b.applyDelta(delta(11, 11, [['98.00', '0', 0]], []));
    expect(b.view().bids.length).toBe(3);
    expect(b.dirtyBid).toBe(Infinity);
    expect(b.rptSeq).toBe(11);
  });

  it('detects a gap, then ignores deltas until a new snapshot', () => {
    const b = new Book('ACME');
    b.applySnapshot(snap);
    expect(b.applyDelta(delta(12, 12, [['99.97', '1', 1]], []))).toBe('gap');
    expect(b.synced).toBe(false);
    expect(b.applyDelta(delta(13, 13, [['99.97', '2', 1]], []))).toBe('ignored');
    // The failed delta was not applied.
    expect(b.view().bids[0]).toEqual(['99.97', '690', 3]);
    b.applySnapshot({ ...snap, rpt_seq: 20, bids: [['99.90', '3', 1]], asks: [] });
    expect(b.applyDelta(delta(21, 22, [], [['100.00', '4', 2]]))).toBe('applied');
    expect(b.view()).toEqual({ rpt_seq: 22, bids: [['99.90', '3', 1]], asks: [['100.00', '4', 2]] });
  });

  it('a repeated delta is a gap too (the stream is not where we are)', () => {
    const b = new Book('ACME');
    b.applySnapshot(snap);
    expect(b.applyDelta(delta(11, 12, [], []))).toBe('applied');
    expect(b.applyDelta(delta(11, 12, [], []))).toBe('gap');
  });

  it('ignores deltas before the first snapshot', () => {
    const b = new Book('ACME');
    expect(b.applyDelta(delta(1, 1, [['1', '1', 1]], []))).toBe('ignored');
    expect(b.view()).toEqual({ rpt_seq: -1, bids: [], asks: [] });
  });

  it('keeps prices as given, and "0.00" deletes', () => {
    const b = new Book('ACME');
    b.applySnapshot({ ...snap, bids: [['100.30', '8', 1]], asks: [] });
    b.applyDelta(delta(11, 11, [['100.3', '9', 2]], []));
    expect(b.view().bids).toEqual([['100.3', '9', 2]]);
    b.applyDelta(delta(12, 12, [['100.30', '0.00', 0]], []));
    expect(b.view().bids).toEqual([]);
  });

  it('keeps a large book sorted under random updates', () => {
    const b = new Book('ACME');
    b.applySnapshot({ ...snap, bids: [], asks: [] });
    const ref = new Map<string, string>();
    let seq = 10;
    let x = 12345;
    const rnd = () => ((x = (x * 1103515245 + 12345) & 0x7fffffff), x);
    for (let i = 0; i < 2000; i++) {
      const p = (90 + (rnd() % 1000) / 100).toFixed(2);
      const q = rnd() % 4 === 0 ? '0' : String(1 + (rnd() % 50));
      if (q === '0') ref.delete(p);
      else ref.set(p, q);
      seq++;
      b.applyDelta(delta(seq, seq, [[p, q, 1]], []));
    }
    const want = [...ref.entries()].sort((a, c) => Number(c[0]) - Number(a[0])).map(([p, q]) => [p, q, 1]);
    expect(b.view().bids).toEqual(want);
  });
});
