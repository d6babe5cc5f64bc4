import { createHash } from 'node:crypto';

// A turn's id names its Redis stream (`turn-stream:<turnId>`) and its job (`narrate-<turnId>`),
// which are not scoped to an adventure. So the server derives it, never the client: a UUID v5
// (RFC 9562) in the adventure's namespace, from the client's action id. The same request gets
// the same turn (a resend finds it), and no client value can name another adventure's turn.

/** RFC 9562 §5.5: SHA-1 of the namespace's 16 bytes and the name, version 5, variant 10. */
export function uuidV5(namespace: string, name: string): string {
  const bytes = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (bytes.length !== 16) throw new Error(`namespace ${namespace} is not a UUID`);
  const hash = createHash('sha1').update(bytes).update(name, 'utf8').digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The turn a client action id starts in an adventure. */
export function turnIdFor(adventureId: string, clientActionId: string): string {
  return uuidV5(adventureId, clientActionId.toLowerCase());
}

/** What an idempotency key promises: this body. Stored with the event that started the turn. */
export function requestFingerprint(request: Record<string, unknown>): string {
  const canonical = JSON.stringify(
    Object.keys(request)
      .sort()
      .map((key) => [key, request[key]]),
  );
  return createHash('sha256').update(canonical).digest('base64url');
}
