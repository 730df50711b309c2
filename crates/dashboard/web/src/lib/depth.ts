// The depth chart's data: cumulative size from the best price outwards, for each side, on one
// ascending price axis (uPlot's layout: x, then one array per series with null where a series
// has no point). Pure: no DOM.

import type { WireLevel } from './book';

export interface Depth {
  /** Prices, ascending: the bids' (lowest first), then the asks'. */
  x: number[];
  /** Cumulative bid size at and above each bid price; null at ask prices. */
  bid: (number | null)[];
  /** Cumulative ask size at and below each ask price; null at bid prices. */
  ask: (number | null)[];
}

/** Cumulative sums of the quantities of `levels` (best first), in that order. */
export function cumulative(levels: readonly WireLevel[]): number[] {
  const out: number[] = [];
  let sum = 0;
  for (const l of levels) {
    sum += Number(l[1]);
    out.push(sum);
  }
  return out;
}

/** The depth of the first `n` levels of each side (best first, as the book gives them). */
export function depth(bids: readonly WireLevel[], asks: readonly WireLevel[], n = 50): Depth {
  const b = bids.slice(0, n);
  const a = asks.slice(0, n);
  const bc = cumulative(b);
  const ac = cumulative(a);
  const x: number[] = [];
  const bid: (number | null)[] = [];
  const ask: (number | null)[] = [];
  for (let i = b.length - 1; i >= 0; i--) {
    x.push(Number(b[i]![0]));
    bid.push(bc[i]!);
    ask.push(null);
  }
  for (let i = 0; i < a.length; i++) {
    x.push(Number(a[i]![0]));
    bid.push(null);
    ask.push(ac[i]!);
  }
  return { x, bid, ask };
}
