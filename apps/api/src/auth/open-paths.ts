// What anyone may fetch without a key. Everything not listed here needs one, however it is
// spelled. The list is matched against the request's path exactly as it was sent — no decoding,
// no case folding, no dot segments, no `;params` — so another spelling of an open path is simply
// not on the list and needs a key too: nothing has to be normalised for the answer to be safe.
// Only GET and HEAD are ever open.
//
// The web client (apps/web, served by the API at `/`) adds its static files here.

/** One open path: a literal, or a pattern over the whole path. */
export type OpenPath = string | RegExp;

/** A file name in a flat asset folder: no slash, no leading dot (so never `.` or `..`). */
const ASSET = '[A-Za-z0-9_-][A-Za-z0-9._-]*';

export const OPEN_PATHS: readonly OpenPath[] = [
  '/health',
  // the API's documentation: the page, its OpenAPI document and Swagger UI's files
  '/docs',
  '/docs/',
  '/docs/json',
  new RegExp(`^/docs/${ASSET}$`),
  // the web client's static files
  '/',
  '/index.html',
  new RegExp(`^/assets/${ASSET}$`),
  new RegExp(`^/favicon${'[A-Za-z0-9._-]*'}$`),
];

const OPEN_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** The path of a request target as sent (`/a/b?c` → `/a/b`). */
export function rawPathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/** Whether `method` on the request target `url` is open to anyone. */
export function isOpenRequest(method: string, url: string): boolean {
  if (!OPEN_METHODS.has(method)) return false;
  const path = rawPathOf(url);
  return OPEN_PATHS.some((open) => (typeof open === 'string' ? open === path : open.test(path)));
}

/** Paths that serve HTML (the docs page, the web client): they get the HTML content policy. */
export function servesHtml(url: string): boolean {
  const path = rawPathOf(url);
  return path === '/' || path === '/index.html' || path === '/docs' || path === '/docs/';
}

/** Anything canonicalPath has more to do for than fold case: escapes, params, dots, `\\`, `//`. */
const PATH_NEEDS_WORK = /[%;.\\\s]|\/\//;

/**
 * The path as a router that decodes, folds case, drops `;params` and resolves dot segments
 * might read it. Used only to decide that a request needs the *admin* key: a spelling that any
 * router could take for /v1/admin is held to it.
 */
export function canonicalPath(url: string): string {
  let path = rawPathOf(url);
  // The common request has nothing to decode, drop or resolve: only its case is folded.
  if (path.startsWith('/') && !PATH_NEEDS_WORK.test(path)) {
    const folded = path.toLowerCase();
    return folded.length > 1 && folded.endsWith('/') ? folded.slice(0, -1) : folded;
  }
  if (!path.startsWith('/')) {
    // absolute-form (GET http://host/path): its path
    try {
      path = new URL(path).pathname;
    } catch {
      return path.toLowerCase();
    }
  }
  for (let round = 0; round < 3 && path.includes('%'); round++) {
    try {
      path = decodeURIComponent(path);
    } catch {
      break;
    }
  }
  const segments: string[] = [];
  for (const raw of path.replace(/\\/g, '/').split('/')) {
    const segment = raw.split(';')[0].trim();
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment.toLowerCase());
  }
  return `/${segments.join('/')}`;
}

/** The trees only the admin key opens: the admin routes and the Prometheus metrics. */
const ADMIN_TREES = ['/v1/admin', '/metrics'];

/** Whether a router could read `url` as an admin route or /metrics (held to the admin key). */
export function isAdminPath(url: string): boolean {
  return isAdminRoute(canonicalPath(url));
}

/** Whether a path (canonical, or a route template as Express matched it) is an admin one. */
export function isAdminRoute(path: string): boolean {
  return ADMIN_TREES.some((tree) => path === tree || path.startsWith(`${tree}/`));
}
