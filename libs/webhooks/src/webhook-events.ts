// Which adventure events a webhook is told of, and what it is told: a pure function, the one
// place that maps the log to webhook events (jobsAfter asks it, so a notify job is written to
// the outbox with the event, in the same statement). A delivery carries ids only; the receiver
// reads the rest (the narration's text, say) through the API with its own key.
//
// Rooms: a member joining is told (to the adventure's owner, the host), and a round opening, by
// the same rule as the room stream's `round-opened` frame (libs/adventure roundOpenedBy: a round
// opens when the one before it closes), so the two never disagree.
import { roundOpenedBy, type AdventureEvent } from '@chronicle/adventure';

/** Every event type a webhook may ask for. */
export const WEBHOOK_EVENT_TYPES = [
  'turn.narrated',
  'turn.failed',
  'member.joined',
  'round.opened',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(value);
}

export interface WebhookEvent {
  event: WebhookEventType;
  /** The same for every webhook told of it and on every retry: the receiver's idempotency key. */
  messageId: string;
  /** Ids and codes only, never story text or secrets. */
  data: Record<string, string>;
}

/** The webhook event an adventure's event is, or null when webhooks are not told of it. */
export function webhookEventOf(adventureId: string, event: AdventureEvent): WebhookEvent | null {
  const opened = roundOpenedBy(event);
  if (opened) {
    // Round ids are per adventure (round-1, round-2, …): the message id names the adventure too.
    return {
      event: 'round.opened',
      messageId: `msg_${adventureId}_${opened}_opened`,
      data: { adventureId, roundId: opened },
    };
  }
  switch (event.type) {
    case 'Narrated':
      return {
        event: 'turn.narrated',
        messageId: `msg_${event.data.turnId}_narrated`,
        data: { adventureId, turnId: event.data.turnId, actionId: event.data.action.id },
      };
    case 'NarrationFailed':
      return {
        event: 'turn.failed',
        messageId: `msg_${event.data.turnId}_failed`,
        data: { adventureId, turnId: event.data.turnId, code: event.data.code },
      };
    case 'MemberJoined': {
      // A member may leave and join again: each join is its own message, named by its time.
      const joinedAt = Date.parse(event.data.at);
      return {
        event: 'member.joined',
        messageId: `msg_${event.data.userId}_joined_${Number.isNaN(joinedAt) ? 0 : joinedAt}`,
        data: { adventureId, userId: event.data.userId, role: event.data.role },
      };
    }
    default:
      return null;
  }
}
