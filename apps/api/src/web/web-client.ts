import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { static as serveStatic } from 'express';

// The web client (apps/web) is static files that `npm run build` writes to dist/web. The API
// serves them at `/` so a player needs nothing but the API's address. Only the built files are
// served — `/` (index.html), `/index.html`, `/favicon.svg`, `/assets/<hashed file>` — so /v1,
// /docs and /health keep their handlers and any other path stays the API's 404. The client's own
// addresses are all `/` (an adventure is `/?adventure=<id>`): no path needs an index.html
// fallback, and every file is on the access guard's allow-list of open paths (OPEN_PATHS).

/**
 * The client runs only its own bundled code: no inline script or style, no other origin, no
 * framing. Inline `style` attributes are not needed: the client sets sizes through the CSSOM.
 */
export const WEB_CLIENT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Where the built client is: dist/web beside the nearest package.json above this file. */
export function webClientDirectory(from = __dirname): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      const built = join(dir, 'dist', 'web');
      return existsSync(join(built, 'index.html')) ? built : null;
    }
    if (dirname(dir) === dir) return null;
  }
}

/**
 * An API path that the static files cannot answer: under /v1/, with nothing that `send` would
 * decode or resolve (`%`, dot segments). The client has no /v1 folder, so such a path names no
 * file, and serve-static would only stat the disk and pass it on: a syscall and a `send` on
 * every GET of the API, each turn's SSE follow included.
 */
const NOT_A_FILE = /^\/v1\/[^%.?]*(\?|$)/;

/** Mounts the client; returns false (and serves nothing) when it has not been built. */
export function serveWebClient(app: NestExpressApplication, directory: string | null): boolean {
  if (directory === null) return false;
  const assets = join(directory, 'assets');
  // Should a build ever put a v1 folder beside index.html, every path goes to the files again.
  const skipsApiPaths = !existsSync(join(directory, 'v1'));
  const files = serveStatic(directory, {
    index: ['index.html'],
    redirect: false,
    dotfiles: 'ignore',
    fallthrough: true,
    setHeaders: (res: Response, path: string) => {
      // The client's own policy replaces the API's on its files (no inline style either).
      res.setHeader('Content-Security-Policy', WEB_CLIENT_CSP);
      // Vite names every asset by a hash of its content: it never changes under its name.
      // index.html names the current assets, so it is checked on every load.
      res.setHeader(
        'Cache-Control',
        path.startsWith(assets) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
  app.use((req: Request, res: Response, next: NextFunction) =>
    skipsApiPaths && NOT_A_FILE.test(req.url) ? next() : files(req, res, next),
  );
  return true;
}
