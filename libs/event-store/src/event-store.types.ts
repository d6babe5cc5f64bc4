export interface NewEvent<Data = unknown> {
  /** A uuid chosen by the caller: the idempotency key of this event. */
  id: string;
  type: string;
  schemaVersion: number;
  data: Data;
  /** Causation/correlation ids, actor, model, usage. */
  metadata?: Record<string, unknown>;
}

export interface StoredEvent<Data = unknown> {
  id: string;
  streamId: string;
  /** 1 for a stream's first event, contiguous after that. */
  version: number;
  /** Global position; unique and increasing in insert order, not in commit order. */
  position: number;
  type: string;
  schemaVersion: number;
  data: Data;
  metadata: Record<string, unknown>;
  recordedAt: Date;
}

/**
 * A job to enqueue once the append commits, as data: the store writes it and hands it to the
 * relay, and never reads it. The queue registry makes these (libs/queue's `outboxRow`), so the
 * row names the queue and id a direct enqueue would have chosen. A row without an id gets one
 * derived from the row (`<jobName>-outbox-<row id>`).
 */
export interface OutboxJob {
  queue: string;
  jobName: string;
  jobId?: string;
  payload: unknown;
}

/** An outbox row as written: what the relay hands to the queue. */
export interface OutboxMessage {
  id: number;
  queue: string;
  jobName: string;
  jobId: string;
  payload: unknown;
}

export interface AppendResult {
  /** Global positions of the batch's events, in version order. */
  positions: number[];
  /** The stream's version after this batch: the expected version of the next append. */
  nextVersion: number;
  /** True when every event id was already stored: nothing was written, the original answer is returned. */
  duplicate: boolean;
  /** The outbox rows written with the batch (empty for a duplicate). */
  outbox: OutboxMessage[];
}

/** Where a global reader stopped: the last delivered event's transaction id and position. */
export interface Checkpoint {
  /** xid8 as a decimal string (64 bits do not fit a JS number). */
  txId: string;
  position: number;
}

export interface Snapshot {
  streamId: string;
  projectorVersion: number;
  /** The stream version the state includes; load events after it. */
  version: number;
  /** The state as its writer encoded it (decompressed). */
  bytes: Buffer;
  createdAt: Date;
}

/** Hands committed outbox rows to the queue; never throws (the sweeper catches up). */
export interface OutboxPublisher {
  publish(messages: readonly OutboxMessage[]): Promise<void>;
}

/**
 * Rows of the read models written in the same statement as the events (see libs/adventure's
 * read-models.ts, which decides them; the event store only writes them). Each part left out is
 * left as it was.
 */
export interface ReadModelWrites {
  /** The stream's owner (adventure_owners): set by its first event, changed by a hand-over. */
  owner?: string;
  /** Every member of the room after the batch, the host included (adventure_members). */
  members?: readonly { userId: string; role: string }[];
  /** Invite codes the batch created and revoked (adventure_invites). */
  invitesAdded?: readonly string[];
  invitesRemoved?: readonly string[];
  /** The turn in flight after the batch (turns_in_flight); null: none. */
  turnInFlight?: string | null;
  /** Paid model calls (model_calls); `offset` is the event's place in the batch, from 1. */
  modelCalls?: readonly {
    offset: number;
    userId: string;
    purpose: string;
    model: string;
    promptTokens: number;
    completionTokens: number;
    cachedTokens: number;
    /** In a room: the members whose actions the call answered (model_calls.members). */
    members?: string[];
  }[];
}
