import { checkWebhookTarget, isPrivateAddress, WebhookTargetError } from './webhook-target';

const resolvesTo =
  (...addresses: string[]) =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('webhook targets', () => {
  it('refuses a URL on 127.0.0.1 by default', async () => {
    await expect(
      checkWebhookTarget('http://127.0.0.1:8080/hook', { allowPrivate: false }),
    ).rejects.toThrow(/private or loopback address \(127\.0\.0\.1\)/);
  });

  it('refuses a name that resolves inside, whatever the string says', async () => {
    for (const inside of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '::1', 'fd00::1']) {
      await expect(
        checkWebhookTarget('https://innocent.example/hook', {
          allowPrivate: false,
          lookup: resolvesTo('93.184.216.34', inside),
        }),
      ).rejects.toBeInstanceOf(WebhookTargetError);
    }
  });

  it('refuses localhost through the real resolver', async () => {
    await expect(
      checkWebhookTarget('http://localhost:9/hook', { allowPrivate: false }),
    ).rejects.toThrow(WebhookTargetError);
  });

  it('accepts a public address, and a private one when the operator allows it', async () => {
    await expect(
      checkWebhookTarget('https://bot.example/hook', {
        allowPrivate: false,
        lookup: resolvesTo('93.184.216.34'),
      }),
    ).resolves.toMatchObject({ url: 'https://bot.example/hook' });
    await expect(
      checkWebhookTarget('http://127.0.0.1:8080/hook', { allowPrivate: true }),
    ).resolves.toMatchObject({ addresses: [{ address: '127.0.0.1', family: 4 }] });
  });

  it('refuses other schemes, credentials and names that do not resolve', async () => {
    const options = { allowPrivate: true, lookup: resolvesTo() };
    await expect(checkWebhookTarget('ftp://bot.example/', options)).rejects.toThrow(/https/);
    await expect(checkWebhookTarget('https://u:p@bot.example/', options)).rejects.toThrow(
      /credentials/,
    );
    await expect(checkWebhookTarget('https://nowhere.example/', options)).rejects.toThrow(
      /does not resolve/,
    );
    await expect(checkWebhookTarget('not a url', options)).rejects.toThrow(/absolute URL/);
  });

  it.each([
    ['127.0.0.1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', true],
    ['::ffff:7f00:1', true], // the mapped form as a URL normalises it
    ['::7f00:1', true],
    ['100.64.0.1', true],
    ['172.31.255.255', true],
    ['fe80::1', true],
    ['64:ff9b::7f00:1', true],
    ['93.184.216.34', false],
    ['2606:2800:220:1:248:1893:25c8:1946', false],
    ['172.32.0.1', false],
  ])('%s is private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});
