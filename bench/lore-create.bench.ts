// Creating an adventure with a 5,000-card book (LIMITS.storyCardsPerAdventure): the request
// body's validation as the API's ValidationPipe runs it (class-transformer, then
// class-validator, with the pipe's options), then the decider's CreateAdventure.
//
// "before" is the DTO as it was: `storyCards` validated as one nested StoryCardDto instance per
// card (@ValidateNested + @Type). "after" is CreateAdventureDto today: the list is checked by the
// decider's own card rules on the plain objects (IsStoryCardList). Both run in this process, one
// after the other, on the same body.
import 'reflect-metadata';
import * as os from 'node:os';
import { randomUUID } from 'node:crypto';
import { Type, plainToInstance } from 'class-transformer';
import { IsArray, IsOptional, IsString, ValidateNested, validate } from 'class-validator';
import { decide, initialState, LIMITS, type StoryCardInput } from '@chronicle/adventure';
import { countTokens } from '@chronicle/adventure-store';
import { CreateAdventureDto, StoryCardDto } from '../apps/api/src/adventures/adventure.dto';
import { ms, timeRuns } from './stats';

/**
 * The DTO before: every card a nested StoryCardDto. Its own class, not a subclass (class-validator
 * would run the parent's list check too); the body's other fields are a title and an opening.
 */
class NestedCardsCreateDto {
  @IsString()
  title!: string;

  @IsString()
  opening!: string;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => StoryCardDto)
  storyCards?: StoryCardDto[];
}

const PIPE_OPTIONS = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  stopAtFirstError: false,
};

function body(count: number) {
  return {
    title: 'A big book',
    opening: 'You wake in the archive.',
    storyCards: Array.from({ length: count }, (_, i) => ({
      name: `Card ${i}`,
      keys: `Card ${i}\nkeeper ${i}`,
      keySyntax: 'lines',
      entry: `Card ${i} is one of the archive's many entries, kept since the flood. `.repeat(3),
      type: 'lore',
      notes: '',
      priority: 100 + (i % 7),
      scan: { actions: 2 },
      conditions: i % 10 === 0 ? [{ mode: 'anyOf', keys: ['archive'] }] : undefined,
    })),
  };
}

async function create(
  dtoClass: typeof CreateAdventureDto | typeof NestedCardsCreateDto,
  json: string,
): Promise<void> {
  const dto = plainToInstance(dtoClass as typeof CreateAdventureDto, JSON.parse(json) as object);
  const errors = await validate(dto, PIPE_OPTIONS);
  if (errors.length > 0) throw new Error(`the body was refused: ${JSON.stringify(errors[0])}`);
  decide(
    {
      type: 'CreateAdventure',
      data: {
        adventureId: randomUUID(),
        ownerId: 'owner',
        openingActionId: randomUUID(),
        title: dto.title,
        opening: dto.opening,
        placeholders: {},
        storyCards: (dto.storyCards ?? []).map(
          // As the API's storyCardInput: a DTO instance holds its undeclared fields as undefined.
          (card) =>
            ({
              ...Object.fromEntries(Object.entries(card).filter(([, v]) => v !== undefined)),
              id: randomUUID(),
            }) as unknown as StoryCardInput,
        ),
        scripts: [],
      },
    },
    initialState(),
    { countTokens },
  );
}

export default async function run(): Promise<string> {
  const loadBefore = os.loadavg()[0];
  const count = LIMITS.storyCardsPerAdventure;
  const json = JSON.stringify(body(count));
  const before = await timeRuns(10, () => create(NestedCardsCreateDto, json), 2);
  const after = await timeRuns(10, () => create(CreateAdventureDto, json), 2);
  return [
    `## Creating an adventure with ${count} cards (body validation + decide)`,
    '',
    '| DTO | p50 | p99 |',
    '|---|---:|---:|',
    `| before: a nested StoryCardDto per card | ${ms(before.p50)} | ${ms(before.p99)} |`,
    `| after: the decider's card rules on plain objects | ${ms(after.p50)} | ${ms(after.p99)} |`,
    '',
    `${(before.p50 / after.p50).toFixed(1)}× faster at p50. Same body, same process, one after the other.`,
    `The 1-minute load average was ${loadBefore.toFixed(1)} at the start and ${os.loadavg()[0].toFixed(1)} at the end on ${os.cpus().length} cores.`,
  ].join('\n');
}
