// The REST calls the dashboard makes, same origin as the page.

import type { Trade } from '../lib/trades';

export interface Instrument {
  symbol: string;
  tick_size: string;
  lot_size: string;
  price_decimals: number;
}

/** An answer: the JSON body of a 2xx, or the status and the error's code and message. */
export type Answer<T> =
  | { ok: true; body: T }
  | { ok: false; status: number; code: string; message: string };

async function get<T>(path: string, kind: 'json' | 'text' = 'json'): Promise<Answer<T>> {
  let r: Response;
  try {
    r = await fetch(path, { headers: { accept: kind === 'json' ? 'application/json' : 'text/csv' } });
  } catch (e) {
    return { ok: false, status: 0, code: 'network', message: String(e) };
  }
  if (r.ok) {
    try {
      return { ok: true, body: (kind === 'json' ? await r.json() : await r.text()) as T };
    } catch (e) {
      return { ok: false, status: r.status, code: 'bad_body', message: String(e) };
    }
  }
  let code = `http_${r.status}`;
  let message = r.statusText;
  try {
    const b = (await r.json()) as { code?: string; message?: string; error?: { code?: string; message?: string } };
    const e = b.error ?? b;
    if (typeof e.code === 'string') code = e.code;
    if (typeof e.message === 'string') message = e.message;
  } catch {
    // Not JSON: keep the status.
  }
  return { ok: false, status: r.status, code, message };
}

export function instruments(): Promise<Answer<{ instruments: Instrument[] }>> {
  return get('/api/v1/instruments');
}

export interface TradesPage {
  symbol: string;
  trades: Trade[];
  next_since: number | null;
}

/** A page of an instrument's trades, newest first, ids below `since` when given. */
export function tradesDesc(symbol: string, since: number | null, limit = 1000): Promise<Answer<TradesPage>> {
  const q = `order=desc&limit=${limit}${since === null ? '' : `&since=${since}`}`;
  return get(`/api/v1/trades/${encodeURIComponent(symbol)}?${q}`);
}

export interface BenchRunInfo {
  name: string;
  bytes: number;
  modified_ns: number;
}

export function benchRuns(): Promise<Answer<{ configured?: boolean; runs: BenchRunInfo[] }>> {
  return get('/api/v1/bench/runs');
}

export function benchRun(name: string): Promise<Answer<string>> {
  return get(`/api/v1/bench/runs/${encodeURIComponent(name)}`, 'text');
}
