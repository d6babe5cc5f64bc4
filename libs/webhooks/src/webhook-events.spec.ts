import type { AdventureEvent } from '@chronicle/adventure';
import { isWebhookEventType, webhookEventOf, WEBHOOK_EVENT_TYPES } from './webhook-events';

describe('webhookEventOf', () => {
  it('given a NarrationFailed, then turn.failed with the turn and its code, one message id per turn', () => {
    const failed = {
      type: 'NarrationFailed',
      data: { turnId: 't1', code: 'model_timeout', message: 'the model timed out', attempts: 3 },
    } as AdventureEvent;
    expect(webhookEventOf('a1', failed)).toEqual({
      event: 'turn.failed',
      messageId: 'msg_t1_failed',
      data: { adventureId: 'a1', turnId: 't1', code: 'model_timeout' },
    });
  });

  it('given a member joining, then member.joined with the member and their role, one message per join', () => {
    const joined = (at: string) =>
      ({
        type: 'MemberJoined',
        data: {
          userId: 'u2',
          role: 'player',
          character: { name: 'Ash' },
          inviteCode: 'c1',
          at,
        },
      }) as unknown as AdventureEvent;
    const first = webhookEventOf('a1', joined('2026-12-06T04:00:00.000Z'));
    expect(first).toEqual({
      event: 'member.joined',
      messageId: `msg_u2_joined_${Date.parse('2026-12-06T04:00:00.000Z')}`,
      data: { adventureId: 'a1', userId: 'u2', role: 'player' },
    });
    expect(first!.messageId).not.toContain(':');
    expect(webhookEventOf('a1', joined('2026-12-06T05:00:00.000Z'))!.messageId).not.toBe(
      first!.messageId,
    );
  });

  it('given an event no webhook is told of, then nothing', () => {
    for (const event of [
      { type: 'PlayerActed', data: { turnId: 't1' } },
      { type: 'NarrationCancelled', data: { turnId: 't1' } },
      { type: 'HeadMoved', data: { from: 'a', to: 'b', reason: 'undo' } },
    ]) {
      expect(webhookEventOf('a1', event as AdventureEvent)).toBeNull();
    }
  });

  it('knows the event types a registration may name, and no other', () => {
    expect(WEBHOOK_EVENT_TYPES).toEqual([
      'turn.narrated',
      'turn.failed',
      'member.joined',
      'round.opened',
    ]);
    expect(isWebhookEventType('turn.narrated')).toBe(true);
    expect(isWebhookEventType('round.closed')).toBe(false);
  });

  it("given a round closing with or without a turn, then round.opened for the next round, by the room stream's rule; given held actions of free, then none", () => {
    const actedRound = {
      type: 'PlayersActed',
      data: { turnId: 't1', roundId: 'round-4', closedBy: 'host', actions: [] },
    } as AdventureEvent;
    expect(webhookEventOf('a1', actedRound)).toEqual({
      event: 'round.opened',
      messageId: 'msg_a1_round-5_opened',
      data: { adventureId: 'a1', roundId: 'round-5' },
    });
    const allPassed = {
      type: 'RoundClosed',
      data: { roundId: 'round-5', closedBy: 'all-in' },
    } as AdventureEvent;
    expect(webhookEventOf('a1', allPassed)?.data).toEqual({
      adventureId: 'a1',
      roundId: 'round-6',
    });
    const held = {
      type: 'PlayersActed',
      data: { turnId: 't2', roundId: null, closedBy: 'held', actions: [] },
    } as AdventureEvent;
    expect(webhookEventOf('a1', held)).toBeNull();
    expect(isWebhookEventType('round.opened')).toBe(true);
  });
});
