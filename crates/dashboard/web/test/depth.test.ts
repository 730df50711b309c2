import { describe, expect, it } from 'vitest';
import { cumulative, depth } from '../src/lib/depth';

describe('depth', () => {
  it('sums from the best price outwards', () => {
    expect(cumulative([['10.00', '5', 1], ['9.99', '7', 2], ['9.98', '1', 1]])).toEqual([5, 12, 13]);
    expect(cumulative([])).toEqual([]);
  });

  it('lays both sides on one ascending price axis', () => {
    const d = depth(
      [['99.97', '690', 3], ['99.96', '122', 1], ['99.95', '640', 2]],
      [['100.05', '888', 3], ['100.07', '507', 2]],
    );
    expect(d.x).toEqual([99.95, 99.96, 99.97, 100.05, 100.07]);
    expect(d.bid).toEqual([1452, 812, 690, null, null]);
    expect(d.ask).toEqual([null, null, null, 888, 1395]);
  });

  it('takes at most n levels a side', () => {
    const d = depth([['2', '1', 1], ['1', '1', 1]], [['3', '2', 1], ['4', '2', 1]], 1);
    expect(d).toEqual({ x: [2, 3], bid: [1, null], ask: [null, 2] });
  });
});
