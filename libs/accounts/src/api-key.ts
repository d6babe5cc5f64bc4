import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// An API key is `chr_<prefix>_<secret>`: the prefix finds the stored row by an index, the secret
// is compared with the stored sha256 of itself. A slow password hash buys nothing here: the
// secret is 256 random bits, so nothing short of the whole space guesses it, and a fast hash
// keeps authentication off the request's critical path.

const KEY_SHAPE = /^chr_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export interface ApiKeyParts {
  prefix: string;
  secret: string;
}

export interface NewApiKey extends ApiKeyParts {
  /** The whole key, shown to its owner once and never stored. */
  key: string;
  secretHash: Buffer;
}

const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function generateApiKey(random: (size: number) => Buffer = randomBytes): NewApiKey {
  const prefix = Array.from(random(12), (byte) => PREFIX_ALPHABET[byte % 36]).join('');
  const secret = random(32).toString('base64url');
  return { prefix, secret, key: `chr_${prefix}_${secret}`, secretHash: hashSecret(secret) };
}

/** The parts of a well-formed key, or null for anything else (never throws on input). */
export function parseApiKey(key: string): ApiKeyParts | null {
  const match = KEY_SHAPE.exec(key);
  return match ? { prefix: match[1], secret: match[2] } : null;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time: how much of a guess matched must not show in the response time. */
export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const hash = hashSecret(secret);
  return hash.length === storedHash.length && timingSafeEqual(hash, storedHash);
}

/** Constant-time comparison of two keys of any length (the admin key from configuration). */
export function keysEqual(given: string, expected: string): boolean {
  return timingSafeEqual(hashSecret(given), hashSecret(expected));
}
