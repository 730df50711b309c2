// The WebSocket to the exchange, reconnected after any close with a backoff of 0.5 s doubling to
// 5 s. Whoever uses it resubscribes in `onOpen`: the server forgets subscriptions with the
// connection.

export type ConnState = 'connecting' | 'open' | 'closed';

export interface ConnectionHandlers {
  onOpen(): void;
  onMessage(msg: unknown, nowMs: number): void;
  onState(state: ConnState): void;
}

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 5000;

/** The WebSocket URL of this page's origin: `ws:` under `http:`, `wss:` under `https:`. */
export function wsUrl(loc: Pick<Location, 'protocol' | 'host'> = location): string {
  return `${loc.protocol === 'https:' ? 'wss:' : 'ws:'}//${loc.host}/ws`;
}

export class Connection {
  state: ConnState = 'closed';
  /** When the last message arrived (ms since the epoch), or null before the first. */
  lastMessageMs: number | null = null;
  /** How many times the socket has opened. */
  opens = 0;
  private ws: WebSocket | null = null;
  private backoff = BACKOFF_MIN_MS;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly url: string,
    private readonly h: ConnectionHandlers,
  ) {}

  start(): void {
    if (this.ws || this.timer) return;
    this.connect();
  }

  send(msg: object): void {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  private setState(s: ConnState): void {
    if (this.state === s) return;
    this.state = s;
    this.h.onState(s);
  }

  private connect(): void {
    this.timer = null;
    this.setState('connecting');
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url);
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      this.backoff = BACKOFF_MIN_MS;
      this.opens++;
      this.setState('open');
      this.h.onOpen();
    };
    ws.onmessage = (e: MessageEvent) => {
      const now = Date.now();
      this.lastMessageMs = now;
      if (typeof e.data !== 'string') return;
      let msg: unknown;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      this.h.onMessage(msg, now);
    };
    // An error is always followed by a close: reconnect from there, once.
    ws.onerror = () => {};
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.retry();
    };
  }

  private retry(): void {
    this.setState('closed');
    const wait = this.backoff;
    this.backoff = Math.min(this.backoff * 2, BACKOFF_MAX_MS);
    this.timer = setTimeout(() => this.connect(), wait);
  }
}
