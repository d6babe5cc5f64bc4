// A webhook's signing secret at rest. It has to stay usable to sign (an HMAC key, unlike an API
// key, which is kept as a hash), so a database dump holding it in clear would let anyone forge
// deliveries that every receiver accepts. It is sealed with AES-256-GCM under
// WEBHOOKS_SECRET_KEY, which lives in the processes' environment and never in the database; the
// webhook's id is the associated data, so a sealed secret copied onto another row does not open.
// Leaking the key and the dump together leaks the secrets: rotate both, and have owners create
// their webhooks again.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class WebhookSecretBox {
  private readonly key: Buffer;

  constructor(keyBase64: string) {
    this.key = Buffer.from(keyBase64, 'base64');
    if (this.key.length !== 32) throw new Error('the webhook secret key must be 32 bytes');
  }

  seal(secret: string, webhookId: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(webhookId));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), sealed]);
  }

  /** The secret; throws when the box was sealed under another key or for another webhook. */
  open(box: Buffer, webhookId: string): string {
    if (box[0] !== VERSION) throw new Error(`unknown sealed secret version ${box[0]}`);
    const iv = box.subarray(1, 1 + IV_BYTES);
    const tag = box.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(webhookId));
    decipher.setAuthTag(tag);
    return Buffer.concat([
      decipher.update(box.subarray(1 + IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }
}
