import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { newWebhookSecret, signedRequest } from './webhook-signing';

describe('signed deliveries (Standard Webhooks)', () => {
  const message = {
    id: 'msg_turn-1-narrated',
    type: 'turn.narrated',
    timestamp: new Date(),
    data: { adventureId: 'a1', turnId: 't1', version: 4 },
  };

  it("verify with the library's own verifier, giving back the payload", () => {
    const secret = newWebhookSecret();
    const { body, headers } = signedRequest(secret, message);
    expect(new Webhook(secret).verify(body, headers)).toEqual({
      type: 'turn.narrated',
      timestamp: message.timestamp.toISOString(),
      data: message.data,
    });
    expect(headers['webhook-id']).toBe('msg_turn-1-narrated');
  });

  it('fail verification when the body was changed or the secret is another', () => {
    const secret = newWebhookSecret();
    const { body, headers } = signedRequest(secret, message);
    expect(() => new Webhook(secret).verify(body.replace('t1', 't2'), headers)).toThrow(
      WebhookVerificationError,
    );
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow(
      WebhookVerificationError,
    );
  });

  it('make secrets in the scheme form, each its own', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newWebhookSecret()).not.toBe(a);
  });
});
