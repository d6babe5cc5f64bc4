import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InvalidCommandError, type StoryCardInput } from '@chronicle/adventure';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { ScriptSandboxPool } from '@chronicle/script-sandbox';
import { checkScriptSyntax } from '../scripts/scripts.use-case';
import type { AppConfig } from '@chronicle/platform';
import { APP_CONFIG } from '../app-config.token';
import { currentOwnerId, requestMetadata } from '../http/request-actor';
import { assertModelAllowed } from './model-policy';
import type { CreateAdventureDto, StoryCardDto } from './adventure.dto';

/** A new adventure from a scenario-like body, its `${Name}` placeholders answered. */
@Injectable()
export class CreateAdventureUseCase {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly sandbox: ScriptSandboxPool,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(body: CreateAdventureDto): Promise<{ id: string; version: number }> {
    assertModelAllowed(body.settings?.model, this.config);
    const placeholders = body.placeholders ?? {};
    for (const [name, answer] of Object.entries(placeholders)) {
      if (typeof answer !== 'string') {
        throw new InvalidCommandError(`placeholders.${name} must be a string answer`);
      }
    }
    const scripts = (body.scripts ?? []).map((script) => ({
      ...definedOnly(script),
      id: randomUUID(),
      name: script.name,
    }));
    for (const script of scripts) await checkScriptSyntax(this.sandbox, script);
    const adventureId = randomUUID();
    const handled = await this.adventures.handle(
      adventureId,
      {
        type: 'CreateAdventure',
        data: {
          adventureId,
          ownerId: currentOwnerId(),
          openingActionId: randomUUID(),
          title: body.title,
          opening: body.opening,
          placeholders,
          plotEssentials: body.plotEssentials,
          authorsNote: body.authorsNote,
          aiInstructions: body.aiInstructions,
          persona: body.persona && { ...body.persona },
          storyCards: (body.storyCards ?? []).map((card) => storyCardInput(card)),
          canon: body.canon && {
            rules: body.canon.rules,
            forbiddenStatusChanges: body.canon.forbiddenStatusChanges.map(({ from, to }) => ({
              from,
              to,
            })),
          },
          settings: body.settings && definedOnly(body.settings),
          scripts,
        },
      },
      requestMetadata(),
    );
    return { id: adventureId, version: handled.state.version };
  }
}

/** A card as the decider takes it; a card sent without an id gets one here. */
export function storyCardInput(card: StoryCardDto): StoryCardInput {
  return {
    // A null here is refused by the decider by name (null only resets a field in an edit).
    ...(definedOnly(card) as Partial<StoryCardInput>),
    id: card.id ?? randomUUID(),
    name: card.name,
    keys: card.keys ?? '',
    entry: card.entry ?? '',
  };
}

/** The given keys only: a DTO instance may carry declared-but-absent keys as undefined. */
export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
