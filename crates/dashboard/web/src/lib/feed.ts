// How far behind the journal the page's book is: for each book message with a `time_ns`, its
// arrival time minus that time, and the median over the last second. Pure: the caller passes
// the clock.

export class FeedDelay {
  private readonly at: Float64Array;
  private readonly delay: Float64Array;
  private next = 0;
  private count = 0;

  constructor(readonly cap = 8192) {
    this.at = new Float64Array(cap);
    this.delay = new Float64Array(cap);
  }

  /** Records a message that arrived at `nowMs` (ms since the epoch) stamped `timeNs`. */
  record(nowMs: number, timeNs: number): void {
    this.at[this.next] = nowMs;
    this.delay[this.next] = nowMs - timeNs / 1e6;
    this.next = (this.next + 1) % this.cap;
    if (this.count < this.cap) this.count++;
  }

  /** The median delay (ms) of the messages that arrived in the second before `nowMs`. */
  medianMs(nowMs: number): number | null {
    const xs: number[] = [];
    for (let k = 0; k < this.count; k++) {
      const i = (this.next - 1 - k + this.cap) % this.cap;
      if (this.at[i]! < nowMs - 1000) break;
      xs.push(this.delay[i]!);
    }
    if (xs.length === 0) return null;
    xs.sort((a, b) => a - b);
    const m = xs.length >>> 1;
    return xs.length % 2 ? xs[m]! : (xs[m - 1]! + xs[m]!) / 2;
  }

  clear(): void {
    this.count = 0;
    this.next = 0;
  }
}
