import { canonicalPath, isAdminPath, isOpenRequest } from './open-paths';

describe('the open allow-list', () => {
  it('given the open paths as sent, when asked with GET or HEAD, then they are open', () => {
    for (const path of [
      '/health',
      '/docs',
      '/docs/',
      '/docs/json',
      '/docs/swagger-ui.css',
      '/',
      '/index.html',
      '/assets/index-4f2a.js',
      '/favicon.ico',
      '/health?x=1',
    ]) {
      expect({ path, open: isOpenRequest('GET', path) }).toEqual({ path, open: true });
    }
    expect(isOpenRequest('HEAD', '/health')).toBe(true);
  });

  it('given any other spelling or method, when asked, then it is not open', () => {
    for (const path of [
      '/Health',
      '/health/',
      '//health',
      '/%68ealth',
      '/health;x',
      '/docs/../v1/adventures',
      '/docs/..',
      '/assets/.env',
      '/assets/a/b.js',
      '/docs/%2e%2e',
      '/v1/adventures',
      'http://host/health',
    ]) {
      expect({ path, open: isOpenRequest('GET', path) }).toEqual({ path, open: false });
    }
    expect(isOpenRequest('POST', '/health')).toBe(false);
    expect(isOpenRequest('OPTIONS', '/docs')).toBe(false);
  });

  it('given spellings a router could read as /v1/admin, when checked, then all need the admin key', () => {
    for (const path of [
      '/v1/admin/users',
      '/V1/Admin/users',
      '/v1//admin',
      '/v1/x/../admin',
      '/v1/%61dmin',
      '/v1/%2561dmin',
      '/v1;p=1/admin;q/users',
      '/v1\\admin',
      'http://h/v1/admin',
    ]) {
      expect({ path, admin: isAdminPath(path) }).toEqual({ path, admin: true });
    }
    expect(isAdminPath('/v1/adventures')).toBe(false);
    expect(canonicalPath('/A/./b//c/../D;x?q')).toBe('/a/b/d');
  });

  it('given spellings a router could read as /metrics, when checked, then all need the admin key', () => {
    for (const path of [
      '/metrics',
      '/METRICS',
      '/metrics/',
      '/metrics?x=1',
      '/%6detrics',
      '/%256detrics',
      '//metrics',
      '/x/../metrics',
      '/metrics;p=1',
      '/\\metrics',
      'http://h/metrics',
    ]) {
      expect({ path, admin: isAdminPath(path) }).toEqual({ path, admin: true });
    }
    expect(isOpenRequest('GET', '/metrics')).toBe(false);
    expect(isAdminPath('/metricsx')).toBe(false);
  });
});
