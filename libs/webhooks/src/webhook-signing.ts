// Deliveries are signed by the Standard Webhooks scheme (https://www.standardwebhooks.com),
// with its maintained library: headers webhook-id, webhook-timestamp and webhook-signature
// (HMAC-SHA256 over "id.timestamp.body", keyed by the secret), so a receiver verifies them
// with any Standard Webhooks verifier, and the id lets it drop a redelivery it already took.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret, in the scheme's form: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface WebhookMessage {
  /** The delivery's id: the same on every retry of it (the receiver's idempotency key). */
  id: string;
  /** e.g. `turn.narrated`, `turn.failed` */
  type: string;
  timestamp: Date;
  data: Record<string, unknown>;
}

export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
}

/** The request body and headers of one delivery, signed with the webhook's secret. */
export function signedRequest(secret: string, message: WebhookMessage): SignedRequest {
  const body = JSON.stringify({
    type: message.type,
    timestamp: message.timestamp.toISOString(),
    data: message.data,
  });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': message.id,
      'webhook-timestamp': String(Math.floor(message.timestamp.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(message.id, message.timestamp, body),
    },
  };
}
