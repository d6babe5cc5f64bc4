import { Inject, Injectable } from '@nestjs/common';
import {
  type AdventureCommand,
  type AdventureState,
  type NarrativeCorrection,
} from '@chronicle/adventure';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import type { AppConfig } from '@chronicle/platform';
import { APP_CONFIG } from '../app-config.token';
import { requestMetadata } from '../http/request-actor';
import { assertModelAllowed } from './model-policy';
import type {
  CorrectNarrativeStateDto,
  EditAdventureDto,
  EditStoryCardDto,
  StoryCardDto,
} from './adventure.dto';
import { definedOnly, storyCardInput } from './create-adventure.use-case';

/**
 * The commands that change an adventure without starting a turn: its fields and cards, the
 * story tree (undo, redo, select, edit, erase) and the narrative state (corrections, retcons).
 * Each one is decided against the head and appended at the expected version.
 */
@Injectable()
export class AdventureCommandsUseCase {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async edit(adventureId: string, body: EditAdventureDto) {
    assertModelAllowed(body.settings?.model, this.config);
    const changes = definedOnly(body);
    const { state } = await this.run(adventureId, {
      type: 'EditAdventure',
      data: {
        ...changes,
        persona: body.persona && { ...body.persona },
        canon: body.canon && {
          rules: body.canon.rules,
          forbiddenStatusChanges: body.canon.forbiddenStatusChanges.map(({ from, to }) => ({
            from,
            to,
          })),
        },
        settings: body.settings && definedOnly(body.settings),
      },
    });
    return { id: adventureId, version: state.version };
  }

  async undo(adventureId: string) {
    return headView(await this.run(adventureId, { type: 'Undo', data: {} }));
  }

  async redo(adventureId: string) {
    return headView(await this.run(adventureId, { type: 'Redo', data: {} }));
  }

  async moveHead(adventureId: string, actionId: string) {
    return headView(await this.run(adventureId, { type: 'MoveHead', data: { actionId } }));
  }

  async editAction(adventureId: string, actionId: string, text: string) {
    const { state } = await this.run(adventureId, {
      type: 'EditAction',
      data: { actionId, text },
    });
    return { actionId, version: state.version };
  }

  async eraseAction(adventureId: string, actionId: string) {
    const { state } = await this.run(adventureId, { type: 'EraseAction', data: { actionId } });
    return { actionId, version: state.version, head: state.head };
  }

  async addCard(adventureId: string, body: StoryCardDto) {
    const card = storyCardInput(body);
    const { state } = await this.run(adventureId, { type: 'AddStoryCard', data: { card } });
    return { card: findCard(state, card.id), version: state.version };
  }

  async editCard(adventureId: string, cardId: string, body: EditStoryCardDto) {
    const { state } = await this.run(adventureId, {
      type: 'EditStoryCard',
      data: { cardId, changes: definedOnly(body) },
    });
    return { card: findCard(state, cardId), version: state.version };
  }

  async removeCard(adventureId: string, cardId: string) {
    const { state } = await this.run(adventureId, {
      type: 'RemoveStoryCard',
      data: { cardId },
    });
    return { cardId, version: state.version };
  }

  async narrativeState(adventureId: string) {
    return narrativeView(await this.adventures.get(adventureId));
  }

  /** Applies the corrections in order, in one append: all of them or none. */
  async correct(adventureId: string, body: CorrectNarrativeStateDto) {
    const corrections = body.corrections.map(
      (correction) => definedOnly(correction) as unknown as NarrativeCorrection,
    );
    const handled = await this.run(adventureId, {
      type: 'ApplyCorrections',
      data: { corrections, anchorActionId: body.anchorActionId },
    });
    return narrativeView(handled.state);
  }

  async retcon(adventureId: string, actionId: string, index: number) {
    const { state } = await this.run(adventureId, {
      type: 'RetconStateEvent',
      data: { actionId, index },
    });
    return narrativeView(state);
  }

  private run(adventureId: string, command: AdventureCommand) {
    return this.adventures.handle(adventureId, command, requestMetadata());
  }
}

function headView({ state }: { state: AdventureState }) {
  return { head: state.head, version: state.version, canRedo: state.redo.length > 0 };
}

function narrativeView(state: AdventureState) {
  return { narrativeState: state.narrative, head: state.head, version: state.version };
}

function findCard(state: AdventureState, cardId: string) {
  return state.cards.find((card) => card.id === cardId) ?? null;
}
