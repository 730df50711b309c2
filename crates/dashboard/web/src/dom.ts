// A small element builder and the page's theme colours (from the CSS custom properties, so the
// charts follow `prefers-color-scheme` like the rest of the page).

type Attrs = Record<string, string | number | boolean | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') e.className = String(v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) e.append(c);
  return e;
}

/** Sets a text node's content only when it differs (no layout work for unchanged cells). */
export function setText(e: HTMLElement, s: string): void {
  if (e.textContent !== s) e.textContent = s;
}

export interface Theme {
  fg: string;
  muted: string;
  grid: string;
  bg: string;
  bid: string;
  ask: string;
  series: string[];
}

export function theme(): Theme {
  const cs = getComputedStyle(document.documentElement);
  const v = (n: string) => cs.getPropertyValue(n).trim();
  return {
    fg: v('--fg'),
    muted: v('--muted'),
    grid: v('--grid'),
    bg: v('--panel'),
    bid: v('--bid'),
    ask: v('--ask'),
    series: [v('--s1'), v('--s2'), v('--s3'), v('--s4'), v('--s5'), v('--s6'), v('--s7')],
  };
}

/** Calls `f` when the system switches between light and dark. */
export function onThemeChange(f: () => void): void {
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', f);
}

/** "HH:MM:SS.mmm" in local time. */
export function fmtTime(ns: number): string {
  const ms = Math.floor(ns / 1e6);
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** Calls `f(width)` whenever `e`'s content width changes (and is not zero: a hidden view). */
export function onWidth(e: HTMLElement, f: (w: number) => void): void {
  let last = -1;
  new ResizeObserver((entries) => {
    for (const en of entries) {
      const w = Math.floor(en.contentRect.width);
      if (w > 0 && w !== last) {
        last = w;
        f(w);
      }
    }
  }).observe(e);
}
