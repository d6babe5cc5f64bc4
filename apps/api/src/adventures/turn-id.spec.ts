import { turnIdFor, uuidV5 } from './turn-id';

describe('turn ids', () => {
  it('uuidV5 is RFC 9562 UUID v5 (the RFC example: DNS namespace, www.example.com)', () => {
    expect(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });

  it('given one client action id in two adventures, when the turns are derived, then they differ', () => {
    const clientId = '0b7ab3c4-5e41-4a6b-8f0a-6bd2d0d5f1e2';
    const a = turnIdFor('11111111-1111-4111-8111-111111111111', clientId);
    const b = turnIdFor('22222222-2222-4222-8222-222222222222', clientId);
    expect(a).not.toBe(b);
    expect(a).not.toBe(clientId);
    expect(turnIdFor('11111111-1111-4111-8111-111111111111', clientId.toUpperCase())).toBe(a);
  });
});
