import { defineConfig } from 'vitest/config';

// The page is served by the exchange at `/` (and may be mounted elsewhere), so every asset URL
// is relative. While developing, `RIALTO=http://127.0.0.1:8080 npm run dev` proxies the API and
// the WebSocket to a running `rialto demo`.
// Node's `process` (no @types/node needed for this one line).
declare const process: { env: Record<string, string | undefined> };
const target = process.env.RIALTO ?? 'http://127.0.0.1:8080';

export default defineConfig({
  base: './',
  build: {
    outDir: 'dist',
    sourcemap: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 400,
  },
  server: {
    host: '127.0.0.1',
    proxy: {
      '/api': { target },
      '/ws': { target: target.replace(/^http/, 'ws'), ws: true },
    },
  },
  preview: {
    host: '127.0.0.1',
    proxy: {
      '/api': { target },
      '/ws': { target: target.replace(/^http/, 'ws'), ws: true },
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
  },
});
