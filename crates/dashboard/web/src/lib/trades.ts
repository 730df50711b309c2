// Trades as the dashboard keeps them, the tape (the latest trades, newest first) and the set of
// trade ids already counted. Pure: no DOM.

export type Side = 'buy' | 'sell';

export interface Trade {
  trade_id: number;
  /** Decimal string, as the API gives it. */
  price: string;
  quantity: string;
  aggressor_side: string;
  /** Journal time (ns since the epoch); the arrival time for a live trade without one. */
  time_ns: number;
}

/** The ids seen lately, at most `cap` of them (the oldest forgotten first). */
export class SeenIds {
  private readonly set = new Set<number>();
  private readonly ring: number[];
  private next = 0;

  constructor(readonly cap: number) {
    this.ring = new Array<number>(cap);
  }

  /** Records `id`; false when it was already there. */
  add(id: number): boolean {
    if (this.set.has(id)) return false;
    if (this.set.size >= this.cap) this.set.delete(this.ring[this.next]!);
    this.ring[this.next] = id;
    this.next = (this.next + 1) % this.cap;
    this.set.add(id);
    return true;
  }

  has(id: number): boolean {
    return this.set.has(id);
  }

  clear(): void {
    this.set.clear();
    this.next = 0;
  }

  get size(): number {
    return this.set.size;
  }
}

/**
 * The latest `cap` trades, newest (highest trade id) first, each id once. A trade older than
 * all of a full tape is dropped; an insert is a binary search and one shift of at most `cap`.
 */
export class Tape {
  readonly trades: Trade[] = [];
  /** Bumped at each change, so a view redraws only when it moved. */
  version = 0;

  constructor(readonly cap: number) {}

  add(t: Trade): boolean {
    const a = this.trades;
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid]!.trade_id > t.trade_id) lo = mid + 1;
      else hi = mid;
    }
    if (lo < a.length && a[lo]!.trade_id === t.trade_id) return false;
    if (lo >= this.cap) return false;
    a.splice(lo, 0, t);
    if (a.length > this.cap) a.pop();
    this.version++;
    return true;
  }

  clear(): void {
    this.trades.length = 0;
    this.version++;
  }

  /** The highest trade id held, or -1. */
  get newestId(): number {
    return this.trades[0]?.trade_id ?? -1;
  }
}
