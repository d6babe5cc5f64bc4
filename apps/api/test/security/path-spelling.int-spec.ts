import { randomBytes, randomUUID } from 'node:crypto';
import { AccountsRepository } from '@chronicle/accounts';
import { aScenario, HARNESS_ADMIN_KEY, startApiHarness, type ApiHarness } from '../api.harness';
import { bearer, rawRequest } from './raw-http';

// Fail closed, tested as an attacker would try it: every route of the OpenAPI document, spelled
// every way a router might read as that route, asked with no key, the owner's key, another
// user's key and the admin key. Nothing is served without the right key, whatever the spelling.

type Caller = 'none' | 'owner' | 'other' | 'admin';

/** Spellings of one path that some router, proxy or decoder could take for it. */
function variants(path: string): Record<string, string> {
  const [, first, ...rest] = path.split('/');
  const tail = rest.join('/');
  const secondEncoded = rest.length
    ? `/${first}/%${rest[0].charCodeAt(0).toString(16)}${rest[0].slice(1)}${rest.length > 1 ? `/${rest.slice(1).join('/')}` : ''}`
    : `/%${first.charCodeAt(0).toString(16)}${first.slice(1)}`;
  return {
    canonical: path,
    upper: `/${first.toUpperCase()}${tail ? `/${tail}` : ''}`,
    'upper segment': rest.length
      ? `/${first}/${rest[0].toUpperCase()}/${rest.slice(1).join('/')}`
      : path.toUpperCase(),
    'trailing slash': `${path}/`,
    'doubled slash': `/${first}//${tail}`,
    'leading doubled slash': `/${path}`,
    'percent-encoded': `/%${first.charCodeAt(0).toString(16)}${first.slice(1)}${tail ? `/${tail}` : ''}`,
    'percent-encoded segment': secondEncoded,
    'encoded slash': `/${first}%2F${tail}`,
    'dot segment': `/${first}/x/../${tail}`,
    'encoded dot segment': `/${first}/x/%2e%2e/${tail}`,
    ';params': `/${first};x=1${tail ? `/${tail}` : ''}`,
  };
}

describe('path spelling × callers over every OpenAPI route', () => {
  let api: ApiHarness;
  let otherKey: string;
  let adventureId: string;
  let routes: { method: string; template: string; path: string }[];

  beforeAll(async () => {
    // Every feature on, so each route's own handler answers (webhooks answer 503 without a key).
    api = await startApiHarness({ webhooksSecretKey: randomBytes(32).toString('base64') });
    const accounts = api.app.get(AccountsRepository);
    const other = await accounts.createUser({ name: 'other' });
    otherKey = (await accounts.createKey(other.id))!.key;
    const created = await api.request('POST', '/v1/adventures', aScenario());
    adventureId = created.body.id;
    const document = await rawRequest(api.baseUrl, 'GET', '/docs/json');
    const paths = document.body.paths as Record<string, Record<string, unknown>>;
    routes = Object.entries(paths).flatMap(([template, operations]) =>
      Object.keys(operations).map((method) => ({
        method: method.toUpperCase(),
        template,
        // the owner's adventure; any other id is one nobody owns
        path: template
          .replace('{id}', template.startsWith('/v1/admin') ? randomUUID() : adventureId)
          .replace(/\{version\}/g, '1')
          .replace(/\{[^}]+\}/g, () => randomUUID()),
      })),
    );
  });

  afterAll(() => api.close());

  const keyOf = (caller: Caller) =>
    caller === 'none'
      ? {}
      : bearer(caller === 'owner' ? api.apiKey : caller === 'other' ? otherKey : HARNESS_ADMIN_KEY);

  const call = (caller: Caller, method: string, path: string) =>
    rawRequest(api.baseUrl, method, path, {
      headers: { ...keyOf(caller), 'content-type': 'application/json' },
      ...(method === 'GET' || method === 'HEAD' || method === 'DELETE' ? {} : { body: '{}' }),
    });

  it('the document lists the routes it should (the matrix is not empty)', () => {
    expect(routes.length).toBeGreaterThan(30);
    expect(routes.some((route) => route.template.startsWith('/v1/admin'))).toBe(true);
  });

  it('no key: 401 on every route and every spelling (only /health and /docs are open)', async () => {
    const served: string[] = [];
    for (const route of routes) {
      for (const [name, path] of Object.entries(variants(route.path))) {
        const open = route.template === '/health' && name === 'canonical' && route.method === 'GET';
        const reply = await call('none', route.method, path);
        if (open ? reply.status !== 200 : reply.status !== 401) {
          served.push(`${route.method} ${path} (${name}) → ${reply.status}`);
        }
      }
    }
    expect(served).toEqual([]);
  });

  it('admin routes: only the admin key, on every spelling; other spellings never reach a handler', async () => {
    const wrong: string[] = [];
    for (const route of routes.filter((r) => r.template.startsWith('/v1/admin'))) {
      for (const [name, path] of Object.entries(variants(route.path))) {
        for (const caller of ['owner', 'other'] as const) {
          const reply = await call(caller, route.method, path);
          if (reply.status !== 401)
            wrong.push(`${caller} ${route.method} ${path} → ${reply.status}`);
        }
        const admin = await call('admin', route.method, path);
        // The canonical spelling reaches the handler (whatever it then answers); any other
        // spelling is not a route: 404, never served.
        const ok = name === 'canonical' ? admin.status !== 401 : admin.status === 404;
        if (!ok) wrong.push(`admin ${route.method} ${path} (${name}) → ${admin.status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("user routes: the owner is served, another user's key is a 404 on the owner's adventure, the admin key is no user key", async () => {
    const wrong: string[] = [];
    for (const route of routes.filter(
      (r) => r.template.startsWith('/v1/') && !r.template.startsWith('/v1/admin'),
    )) {
      const scoped = route.template.startsWith('/v1/adventures/{id}');
      for (const [name, path] of Object.entries(variants(route.path))) {
        const owner = await call('owner', route.method, path);
        const other = await call('other', route.method, path);
        const admin = await call('admin', route.method, path);
        if (admin.status !== 401) wrong.push(`admin ${route.method} ${path} → ${admin.status}`);
        if (name !== 'canonical') {
          // Not a route as spelled: a key does not make a spelling reach a handler.
          for (const [who, reply] of [
            ['owner', owner],
            ['other', other],
          ] as const) {
            if (reply.status !== 404 && reply.status !== 401) {
              wrong.push(`${who} ${route.method} ${path} (${name}) → ${reply.status}`);
            }
          }
          continue;
        }
        if (owner.status === 401 || owner.status === 403 || owner.status >= 500) {
          wrong.push(`owner ${route.method} ${path} → ${owner.status}`);
        }
        if (scoped && other.status !== 404) {
          wrong.push(`other ${route.method} ${path} → ${other.status}`);
        }
        if (!scoped && (other.status === 401 || other.status >= 500)) {
          wrong.push(`other ${route.method} ${path} → ${other.status}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('paths outside every route still need a key', async () => {
    for (const path of [
      '/nope',
      '/v1',
      '/v1/',
      '/V1/ADMIN/USERS',
      '/health/../v1/adventures',
      '/docs/../v1/adventures',
      '/assets/../v1/adventures',
      '/docs/%2e%2e/v1/adventures',
      'http://x/v1/adventures',
    ]) {
      const reply = await rawRequest(api.baseUrl, 'GET', path);
      expect({ path, status: reply.status }).toEqual({ path, status: 401 });
    }
    expect((await rawRequest(api.baseUrl, 'GET', '/docs')).status).toBe(200);
    expect((await rawRequest(api.baseUrl, 'GET', '/docs/json')).status).toBe(200);
    expect((await rawRequest(api.baseUrl, 'POST', '/health')).status).toBe(401);
  });
});
