import type { NextFunction, Request, Response } from 'express';
import { servesHtml } from '../auth/open-paths';

// Headers every answer carries. The API's JSON needs no content policy beyond "load nothing";
// the HTML it serves (the docs page, the web client) loads its scripts from this origin only.
// Swagger UI's page has an inline <style> block, hence 'unsafe-inline' for styles alone; no
// inline script runs anywhere.

/** The policy of every HTML page the API serves; the web client may extend it here. */
export const HTML_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/** The policy of everything else (JSON, SSE, Swagger UI's scripts and styles). */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

export function securityHeaders(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader(
    'Content-Security-Policy',
    servesHtml(req.url) ? HTML_CONTENT_SECURITY_POLICY : API_CONTENT_SECURITY_POLICY,
  );
  next();
}
