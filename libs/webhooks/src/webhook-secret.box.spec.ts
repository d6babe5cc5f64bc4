import { randomBytes } from 'node:crypto';
import { WebhookSecretBox } from './webhook-secret.box';
import { newWebhookSecret } from './webhook-signing';

describe('WebhookSecretBox', () => {
  const key = randomBytes(32).toString('base64');

  it('given a sealed secret, then it opens to the secret under the same key and webhook', () => {
    const secret = newWebhookSecret();
    const box = new WebhookSecretBox(key);
    const sealed = box.seal(secret, 'w1');
    expect(sealed.toString('latin1')).not.toContain(secret.slice(6, 20));
    expect(new WebhookSecretBox(key).open(sealed, 'w1')).toBe(secret);
  });

  it('given another key or another webhook, then it does not open', () => {
    const sealed = new WebhookSecretBox(key).seal(newWebhookSecret(), 'w1');
    expect(() =>
      new WebhookSecretBox(randomBytes(32).toString('base64')).open(sealed, 'w1'),
    ).toThrow();
    expect(() => new WebhookSecretBox(key).open(sealed, 'w2')).toThrow();
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new WebhookSecretBox(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
  });
});
