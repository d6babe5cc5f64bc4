import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { static as serveStatic } from 'express';

// The web client (apps/web) is static files that `npm run build` writes to dist/web. The API
// serves them at `/` so a player needs nothing but the API's address. Only paths that are not
// the API's own reach this module: /v1, /docs and /health keep their handlers. The client's own
// addresses are all `/` (an adventure is `/?adventure=<id>`); any other GET that asks for HTML
// is answered with index.html too, so a client route added later needs no change here.

/** Paths the API answers itself; never the client's. */
const API_PATHS = /^\/(v1|docs|health)(\/|$)/;

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

/** Mounts the client; returns false (and serves nothing) when it has not been built. */
export function serveWebClient(app: NestExpressApplication, directory: string | null): boolean {
  if (directory === null) return false;
  const index = join(directory, 'index.html');
  const headers = (res: Response) => {
    res.setHeader('Content-Security-Policy', WEB_CLIENT_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
  };
  app.use(
    serveStatic(directory, {
      index: false,
      fallthrough: true,
      setHeaders: (res, path) => {
        headers(res);
        // Vite names every asset by a hash of its content: it never changes under its name.
        // index.html names the current assets, so it is checked on every load.
        res.setHeader(
          'Cache-Control',
          path.includes(`${join(directory, 'assets')}`)
            ? 'public, max-age=31536000, immutable'
            : 'no-cache',
        );
      },
    }),
  );
  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || API_PATHS.test(req.path)) {
      return next();
    }
    if (req.path.startsWith('/assets/') || !req.accepts('html')) return next();
    headers(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return true;
}
