// Which background work follows which events: a pure function of what was just decided and the
// adventure it leaves, so the rule lives in one place instead of in each use case that appends.
// The command handler writes these jobs to the outbox in the same statement as the events.
import {
  currentPlayerOf,
  isRoomAdventure,
  roomTimeoutsOf,
  turnPolicyOf,
  turnRoleOf,
  type AdventureState,
  type DecidedEvent,
} from '@chronicle/adventure';
import { JobName, type JobRequest } from '@chronicle/queue';
import { webhookEventOf } from '@chronicle/webhooks';

/** Where the decision came from, as the command's metadata says: carried to the narrate job. */
export interface JobOrigin {
  /** The request's correlation id. */
  requestId?: string;
  /** Epoch ms the API received the request. */
  requestedAt?: number;
}

/**
 * - An imported event (its metadata says `importedFrom`) calls for nothing here: its work was
 *   the installation's it was recorded on, as the usage ledger too counts it as theirs.
 * - A turn that starts (the event catalogue's `starts`: a player action, a continue, a retry)
 *   is narrated.
 * - A narration is followed by a memory pass when the adventure keeps memories or a summary.
 * - A memory the player wrote or changed needs a vector before retrieval can rank it, so a
 *   memory pass follows when the memory bank is on. The worker's own memories never start one.
 * - An event a webhook may be told of (`webhookEventOf`: a turn narrated or failed) is followed
 *   by a notify job on the webhooks queue, which finds the owner's webhooks that asked for it;
 *   written whether or not any did, since whether they did is not in the adventure's state.
 * At most one memory pass per append: the memory queue coalesces them per adventure anyway.
 */
export function jobsAfter(
  events: readonly DecidedEvent[],
  state: AdventureState,
  origin: JobOrigin = {},
): JobRequest[] {
  const adventureId = state.id;
  if (adventureId === null) return [];
  const { memoryBankEnabled, autoSummarize } = state.settings;
  const jobs: JobRequest[] = [];
  let memoryPass = false;
  for (const event of events) {
    if (event.metadata?.importedFrom !== undefined) continue;
    const turn = turnRoleOf(event);
    if (turn?.role === 'starts') {
      jobs.push({
        jobName: JobName.NarrateTurn,
        payload: {
          adventureId,
          turnId: turn.turnId,
          ...(state.ownerId !== null && { userId: state.ownerId }),
          ...(origin.requestId !== undefined && { requestId: origin.requestId }),
          ...(origin.requestedAt !== undefined && { requestedAt: origin.requestedAt }),
        },
      });
    }
    const webhookEvent = state.ownerId !== null ? webhookEventOf(adventureId, event) : null;
    if (webhookEvent !== null && state.ownerId !== null) {
      jobs.push({
        jobName: JobName.NotifyWebhooks,
        payload: { adventureId, userId: state.ownerId, ...webhookEvent },
      });
    }
    switch (event.type) {
      case 'Narrated':
        memoryPass ||= memoryBankEnabled || autoSummarize;
        break;
      case 'MemoryWritten':
        memoryPass ||= memoryBankEnabled && event.data.createdBy === 'player';
        break;
      case 'MemoryEdited':
        memoryPass ||= memoryBankEnabled;
        break;
      default:
        break;
    }
  }
  if (memoryPass) {
    jobs.push({
      jobName: JobName.UpdateMemory,
      payload: { adventureId, ...(state.ownerId !== null && { userId: state.ownerId }) },
    });
  }
  return [...jobs, ...roomTimersAfter(events, state, adventureId)];
}

/**
 * A room's timers (delayed jobs whose effect the decider judges when they run out):
 * - `round`: a submission or pass in the open round sets its timeout and its idle timeout (the
 *   first one sets them: the job id is the round's, so later ones are no-ops);
 * - `hot-seat`: a turn that ends, or a skip, starts the next seat's idle timeout.
 */
function roomTimersAfter(
  events: readonly DecidedEvent[],
  state: AdventureState,
  adventureId: string,
): JobRequest[] {
  if (!isRoomAdventure(state)) return [];
  const timeouts = roomTimeoutsOf(state);
  const policy = turnPolicyOf(state);
  const jobs: JobRequest[] = [];
  const timer = (payload: Omit<JobRequest & { jobName: 'turn-timer' }, 'jobName'>['payload']) =>
    jobs.push({ jobName: JobName.TurnTimer, payload });
  const roundId = state.turns.round.id;
  if (
    policy === 'round' &&
    events.some(
      (e) =>
        (e.type === 'ActionSubmitted' || e.type === 'PlayerPassed') && e.data.roundId === roundId,
    )
  ) {
    if (timeouts.round > 0) {
      timer({ adventureId, timer: { timer: 'round', roundId }, delayMs: timeouts.round * 1000 });
    }
    if (timeouts.idle > 0) {
      timer({ adventureId, timer: { timer: 'idle', roundId }, delayMs: timeouts.idle * 1000 });
    }
  }
  const seatMoved = events.some(
    (e) =>
      turnRoleOf(e)?.role === 'ends' || (e.type === 'PlayerMarkedAway' && e.data.roundId === null),
  );
  const seat = currentPlayerOf(state);
  if (policy === 'hot-seat' && seatMoved && !state.inFlight && seat !== null && timeouts.idle > 0) {
    timer({
      adventureId,
      timer: { timer: 'seat', userId: seat, since: state.turns.seatSince },
      delayMs: timeouts.idle * 1000,
    });
  }
  return jobs;
}
