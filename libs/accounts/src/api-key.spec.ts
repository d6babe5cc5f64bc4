import { generateApiKey, keysEqual, parseApiKey, secretMatches } from './api-key';

describe('API keys', () => {
  it('are chr_<prefix>_<secret>, parse back to their parts and match their stored hash', () => {
    const created = generateApiKey();
    expect(created.key).toMatch(/^chr_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    expect(parseApiKey(created.key)).toEqual({ prefix: created.prefix, secret: created.secret });
    expect(secretMatches(created.secret, created.secretHash)).toBe(true);
    expect(created.secretHash.toString('hex')).not.toContain(created.secret);
  });

  it('differ every time', () => {
    const keys = new Set(Array.from({ length: 100 }, () => generateApiKey().key));
    expect(keys.size).toBe(100);
  });

  it('refuse a wrong secret and anything malformed', () => {
    const created = generateApiKey();
    const other = generateApiKey();
    expect(secretMatches(other.secret, created.secretHash)).toBe(false);
    for (const bad of [
      '',
      'chr_',
      `${created.key}x`,
      created.key.slice(1),
      'Bearer x',
      'chr_ABC_def',
    ]) {
      expect(parseApiKey(bad)).toBeNull();
    }
  });

  it('compare admin keys of any length', () => {
    expect(keysEqual('admin-secret', 'admin-secret')).toBe(true);
    expect(keysEqual('admin-secre', 'admin-secret')).toBe(false);
    expect(keysEqual('', 'admin-secret')).toBe(false);
  });
});
