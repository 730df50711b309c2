// The order book of one instrument, as the WebSocket `book` channel describes it: a snapshot,
// then deltas whose levels replace the level at their price (quantity "0" deletes it). Pure: no
// DOM, no timers. Each delta costs O(levels changed × log levels) plus the shift of a sorted
// array on an insert or delete.

/** A level as the API sends it: `[price, quantity, orders]`, decimal strings as given. */
export type WireLevel = [string, string, number];

export interface BookSnapshotMsg {
  type: 'book_snapshot';
  symbol: string;
  rpt_seq: number;
  bids: WireLevel[];
  asks: WireLevel[];
  time_ns?: number;
}

export interface BookDeltaMsg {
  type: 'book';
  symbol: string;
  first_rpt_seq: number;
  rpt_seq: number;
  bids: WireLevel[];
  asks: WireLevel[];
  time_ns?: number;
}

/** What a message did to the book. */
export type ApplyResult =
  | 'applied'
  /** A delta that does not follow the last one: the book is unknown until a new snapshot. */
  | 'gap'
  /** A delta before any snapshot (or after a gap): ignored, a snapshot is on its way. */
  | 'ignored';

interface Level {
  price: string;
  qty: string;
  orders: number;
}

/** One side: levels by numeric price, and the prices sorted best first. */
export class Side {
  readonly levels = new Map<number, Level>();
  /** Best first: descending for bids, ascending for asks. */
  readonly order: number[] = [];

  constructor(private readonly descending: boolean) {}

  clear(): void {
    this.levels.clear();
    this.order.length = 0;
  }

  /** The index where `px` is or would go in `order`. */
  private find(px: number): number {
    const a = this.order;
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = a[mid]!;
      const before = this.descending ? v > px : v < px;
      if (before) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Applies one wire level; returns the best-first index it touched. */
  set(l: WireLevel): number {
    const [price, qty, orders] = l;
    const px = Number(price);
    const existing = this.levels.get(px);
    if (isZero(qty)) {
      if (!existing) return -1;
      this.levels.delete(px);
      const i = this.find(px);
      this.order.splice(i, 1);
      return i;
    }
    if (existing) {
      existing.price = price;
      existing.qty = qty;
      existing.orders = orders;
      return this.find(px);
    }
    this.levels.set(px, { price, qty, orders });
    const i = this.find(px);
    this.order.splice(i, 0, px);
    return i;
  }

  /** The first `n` levels, best first (all of them without `n`). */
  top(n = Infinity): WireLevel[] {
    const out: WireLevel[] = [];
    const m = Math.min(n, this.order.length);
    for (let i = 0; i < m; i++) {
      const l = this.levels.get(this.order[i]!)!;
      out.push([l.price, l.qty, l.orders]);
    }
    return out;
  }

  level(i: number): Level | undefined {
    const px = this.order[i];
    return px === undefined ? undefined : this.levels.get(px);
  }
}

/** True for "0", "0.00", "-0" and the like. */
export function isZero(s: string): boolean {
  return Number(s) === 0;
}

export class Book {
  readonly bids = new Side(true);
  readonly asks = new Side(false);
  /** The `rpt_seq` of the last change applied; -1 before a snapshot. */
  rptSeq = -1;
  /** Whether the book is known (a snapshot and every delta since). */
  synced = false;
  /** Journal time of the last change, when the server says (ns since the epoch). */
  timeNs: number | null = null;
  /**
   * The smallest best-first index changed on each side since the last `takeDirty`, or
   * Infinity when unchanged: a ladder of the top 15 redraws only when one of those moved.
   */
  dirtyBid = Infinity;
  dirtyAsk = Infinity;

  constructor(readonly symbol: string) {}

  applySnapshot(m: BookSnapshotMsg): ApplyResult {
    this.bids.clear();
    this.asks.clear();
    for (const l of m.bids) this.bids.set(l);
    for (const l of m.asks) this.asks.set(l);
    this.rptSeq = m.rpt_seq;
    this.synced = true;
    this.timeNs = m.time_ns ?? null;
    this.dirtyBid = 0;
    this.dirtyAsk = 0;
    return 'applied';
  }

  applyDelta(m: BookDeltaMsg): ApplyResult {
    if (!this.synced) return 'ignored';
    if (m.first_rpt_seq !== this.rptSeq + 1) {
      this.synced = false;
      return 'gap';
    }
    for (const l of m.bids) {
      const i = this.bids.set(l);
      if (i >= 0 && i < this.dirtyBid) this.dirtyBid = i;
    }
    for (const l of m.asks) {
      const i = this.asks.set(l);
      if (i >= 0 && i < this.dirtyAsk) this.dirtyAsk = i;
    }
    this.rptSeq = m.rpt_seq;
    if (m.time_ns !== undefined) this.timeNs = m.time_ns;
    return 'applied';
  }

  /** Whether anything within the first `n` levels of a side changed since `clearDirty`. */
  dirtyWithin(n: number): boolean {
    return this.dirtyBid < n || this.dirtyAsk < n;
  }

  clearDirty(): void {
    this.dirtyBid = Infinity;
    this.dirtyAsk = Infinity;
  }

  /** The whole book (or its first `n` levels a side), best first. */
  view(n = Infinity): { rpt_seq: number; bids: WireLevel[]; asks: WireLevel[] } {
    return { rpt_seq: this.rptSeq, bids: this.bids.top(n), asks: this.asks.top(n) };
  }
}
