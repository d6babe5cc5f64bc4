// The web client's build: static files in dist/web, which the API serves at `/`. Every asset
// is named by a hash of its content (long-cached by the API); nothing is inlined into
// index.html, so the API's Content-Security-Policy needs no 'unsafe-inline'.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
  server: {
    // `npx vite apps/web` during development: the API on :3000 answers what the client asks.
    proxy: { '/v1': 'http://127.0.0.1:3000' },
  },
});
