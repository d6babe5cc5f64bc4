import { Injectable } from '@nestjs/common';
import {
  NotFoundError,
  adventureStreamId,
  lastNarrationOf,
  takesOf,
  requireNode,
  storyActionCount,
  storyPath,
  storySummary,
  roomTurnsView,
  type AdventureState,
  type RoomTurnsView,
} from '@chronicle/adventure';
import { AdventureOwners } from '@chronicle/accounts';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { EventStoreRepository } from '@chronicle/event-store';
import { currentOwnerId } from '../http/request-actor';
import {
  ACTIONS_PAGE_DEFAULT,
  ADVENTURES_PAGE_DEFAULT,
  EVENTS_PAGE_DEFAULT,
  type ActionsPageQuery,
  type AdventuresPageQuery,
  type EventsPageQuery,
} from './paging.dto';
import type {
  ActionView,
  StoryActionView,
  AdventureListView,
  AdventureView,
  EventsPageView,
} from './adventure.views';

// The read side of the API: the projection shaped for a client. Every answer is computed from
// the projection (snapshot + newer events) and the texts of one page, read by version.

export function turnStreamPath(adventureId: string, turnId: string): string {
  return `/v1/adventures/${adventureId}/turns/${turnId}/stream`;
}

/** A room's stream (spec/multiplayer.md §3.4): its frames say when a waiting action's turn starts. */
export function roomStreamPath(adventureId: string): string {
  return `/v1/adventures/${adventureId}/stream`;
}

@Injectable()
export class AdventureReader {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly events: EventStoreRepository,
    private readonly owners: AdventureOwners,
  ) {}

  async view(adventureId: string, page: ActionsPageQuery = {}): Promise<AdventureView> {
    return this.shape(await this.adventures.get(adventureId), page);
  }

  /**
   * One action of the story at the head, with its text and its place on the path (`position`,
   * 0 for the opening): what a report's citation (a recalled passage, a memory's source) points
   * at. An action undone, erased or on another branch is a 404, so nothing of another branch
   * is shown.
   */
  async action(adventureId: string, actionId: string): Promise<StoryActionView> {
    const state = await this.adventures.get(adventureId);
    const path = storyPath(state);
    const position = path.findIndex((entry) => entry.id === actionId);
    if (position < 0) {
      throw new NotFoundError(
        `action ${actionId} is not in the story at the head (undone, erased or on another branch)`,
      );
    }
    const entry = path[position];
    const [text] = await this.adventures.readActionTexts(adventureId, [entry]);
    return {
      id: entry.id,
      type: entry.type,
      text,
      turnId: entry.turnId,
      position,
      version: state.version,
    };
  }

  async list(page: AdventuresPageQuery): Promise<AdventureListView> {
    const limit = page.limit ?? ADVENTURES_PAGE_DEFAULT;
    const ids = await this.owners.listMemberOf(currentOwnerId(), page.after, limit);
    const states = await Promise.all(ids.map((id) => this.adventures.load(id)));
    const adventures = states
      .filter((state): state is AdventureState => state !== null)
      .map((state) => ({
        id: state.id as string,
        title: state.fields.title,
        version: state.version,
      }));
    return { adventures, next: ids.length === limit ? (ids.at(-1) ?? null) : null };
  }

  async eventLog(adventureId: string, page: EventsPageQuery): Promise<EventsPageView> {
    await this.adventures.get(adventureId);
    const after = page.after ?? 0;
    const limit = page.limit ?? EVENTS_PAGE_DEFAULT;
    const stored = await this.events.readStream(adventureStreamId(adventureId), {
      from: after + 1,
      limit,
    });
    return {
      events: stored.map((event) => ({
        id: event.id,
        version: event.version,
        type: event.type,
        schemaVersion: event.schemaVersion,
        data: event.data,
        metadata: event.metadata,
        recordedAt: event.recordedAt.toISOString(),
      })),
      next: stored.length === limit ? (stored.at(-1)?.version ?? null) : null,
    };
  }

  async lastContext(adventureId: string) {
    const state = await this.adventures.get(adventureId);
    if (!state.lastContext) {
      throw new NotFoundError(
        `adventure ${adventureId} has no narrated turn yet; act first, or preview the next context with POST …/context/preview`,
      );
    }
    return state.lastContext;
  }

  private async shape(state: AdventureState, page: ActionsPageQuery): Promise<AdventureView> {
    const adventureId = state.id as string;
    const path = storyPath(state);
    let end = path.length;
    if (page.before !== undefined) {
      end = path.findIndex((entry) => entry.id === page.before);
      if (end < 0) {
        throw new NotFoundError(
          `action ${page.before} is not in the story at the head; page with an id from "actions"`,
        );
      }
    }
    const start = Math.max(0, end - (page.limit ?? ACTIONS_PAGE_DEFAULT));
    const entries = path.slice(start, end);
    const texts = await this.adventures.readActionTexts(adventureId, entries);
    const actions: ActionView[] = entries.map((entry, i) => {
      const node = requireNode(state, entry.id);
      return {
        id: entry.id,
        type: entry.type,
        text: texts[i],
        turnId: entry.turnId,
        parentId: node.parentId,
        depth: node.depth,
      };
    });
    const { inFlight } = state;
    const last = lastNarrationOf(state);
    const lastNode = last && requireNode(state, last.id);
    return {
      id: adventureId,
      ownerId: state.ownerId,
      version: state.version,
      ...state.fields,
      placeholders: state.placeholders,
      settings: state.settings,
      // An imported card's source entry is for export (GET …/story-cards/export), not every read.
      storyCards: state.cards.map(({ origin, ...card }) =>
        origin ? { ...card, origin: { format: origin.format, bookId: origin.bookId } } : card,
      ),
      storySummary: storySummary(state),
      narrativeState: state.narrative,
      head: state.head,
      canRedo: state.redo.length > 0,
      actions,
      total: storyActionCount(state),
      /** More actions before the first of `actions`: ask again with `before` = its id. */
      more: start > 0,
      /**
       * The newest narration on the story: what the referee made of its state block, and its
       * takes (one per retry, oldest first) for a pager; select one with PUT …/head.
       */
      lastNarration: lastNode
        ? {
            actionId: lastNode.id,
            accepted: lastNode.accepted,
            rejected: lastNode.rejected,
            retconned: lastNode.retconned,
            takes: takesOf(state, lastNode.id),
          }
        : null,
      turnInFlight: inFlight
        ? {
            turnId: inFlight.turnId,
            kind: inFlight.kind,
            actionId: inFlight.actionId,
            stream: turnStreamPath(adventureId, inFlight.turnId),
          }
        : null,
      // A room's turn policy and what its round waits for; a one-player adventure has none.
      ...roomBlock(state),
    };
  }
}

function roomBlock(state: AdventureState): { room?: RoomTurnsView } {
  const room = roomTurnsView(state);
  return room ? { room } : {};
}
