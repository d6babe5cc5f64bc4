import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { TurnAccepted } from './submit-action.use-case';
import type { AdventureFields, AdventureSettings, AdventureState } from '@chronicle/adventure';

// What the adventure routes answer, declared for the OpenAPI document (`/docs/json`): the typed
// client (libs/client) is generated from it, so a route's answer is typed only when it is named
// here. The reader and the use cases return these types, so a shape changed in code without its
// declaration does not compile. Free-form parts (settings, the narrative state, story cards,
// event data) are objects whose shapes the decider owns; they are documented as objects.

const FREE_FORM = { type: 'object', additionalProperties: true } as const;

export class AdventureCreatedView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ description: 'The stream version after creation' }) version!: number;
}

export class AdventureSummaryView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() title!: string;
  @ApiProperty() version!: number;
}

export class AdventureListView {
  @ApiProperty({ type: [AdventureSummaryView] }) adventures!: AdventureSummaryView[];
  @ApiProperty({ type: String, nullable: true, description: 'The `after` of the next page' })
  next!: string | null;
}

export class TurnAcceptedView implements TurnAccepted {
  @ApiProperty({ format: 'uuid' }) turnId!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The player action written; null for continue and retry',
  })
  actionId!: string | null;
  @ApiProperty({ description: 'The stream version right after the event that started the turn' })
  version!: number;
  @ApiProperty({ description: "The turn's SSE stream (GET it; resume with Last-Event-ID)" })
  stream!: string;
  @ApiPropertyOptional({
    enum: [true],
    description:
      'A room under `free`: held for the next turn (`turnId`), which starts when this one ends',
  })
  held?: true;
  @ApiPropertyOptional({
    description: 'A room under `round`: the round the action was submitted to',
  })
  roundId?: string;
  @ApiPropertyOptional({ enum: [true] }) submitted?: true;
  @ApiPropertyOptional({
    enum: [true],
    description: "A room under `round`: this submission closed the round; `stream` is its turn's",
  })
  closed?: true;
}

/** What a pass, a withdrawal or a close did to the open round. */
export class RoundChangedView {
  @ApiProperty({ description: 'The round the request was about' }) roundId!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The turn that narrates the round, when the request closed it (null: still open, or nothing to narrate)',
  })
  turnId!: string | null;
  @ApiProperty({ description: 'The stream version after the request' }) version!: number;
}

/** The turn policy's state in a room (GET /v1/adventures/:id `room`). */
export class RoomRoundView {
  @ApiProperty() id!: string;
  @ApiProperty({ type: [String] }) submitted!: string[];
  @ApiProperty({ type: [String] }) passed!: string[];
  @ApiProperty({ type: [String], description: 'Players the round still waits for' })
  waitingFor!: string[];
  @ApiProperty({ type: [String] }) away!: string[];
  @ApiProperty({ description: 'Closed while a turn was narrated: it closes when that turn ends' })
  closing!: boolean;
}

export class RoomTurnsBlockView {
  @ApiProperty({ enum: ['free', 'round', 'hot-seat'] }) policy!: 'free' | 'round' | 'hot-seat';
  @ApiProperty({ type: RoomRoundView }) round!: RoomRoundView;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'hot-seat: whose turn it is' })
  currentPlayer?: string | null;
  @ApiProperty({
    type: [String],
    description: 'free: players whose action waits for the next turn',
  })
  held!: string[];
}

export class ActionView {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ['start', 'do', 'say', 'story', 'ai'] })
  type!: 'start' | 'do' | 'say' | 'story' | 'ai';
  @ApiProperty() text!: string;
  @ApiProperty({ type: String, nullable: true }) turnId!: string | null;
  @ApiProperty({ type: String, nullable: true }) parentId!: string | null;
  @ApiProperty() depth!: number;
}

/** One action of the story at the head, as a report's citation points at it. */
export class StoryActionView {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ['start', 'do', 'say', 'story', 'ai'] })
  type!: 'start' | 'do' | 'say' | 'story' | 'ai';
  @ApiProperty() text!: string;
  @ApiProperty({ type: String, nullable: true }) turnId!: string | null;
  @ApiProperty({ description: 'Its place on the story path: 0 is the opening' })
  position!: number;
  @ApiProperty({ description: 'The stream version read' }) version!: number;
}

export class RejectionView {
  @ApiProperty() line!: string;
  @ApiProperty() reason!: string;
  @ApiProperty() fix!: string;
}

export class LastNarrationView {
  @ApiProperty() actionId!: string;
  @ApiProperty({
    type: 'array',
    items: { ...FREE_FORM, properties: { type: { type: 'string' } }, required: ['type'] },
    description: 'The state events the referee accepted',
  })
  accepted!: Array<{ type: string }>;
  @ApiProperty({ type: [RejectionView] }) rejected!: RejectionView[];
  @ApiProperty({ type: [Number] }) retconned!: number[];
  @ApiProperty({ type: [String], description: 'Every take of the turn, oldest first' })
  takes!: string[];
}

export class TurnInFlightView {
  @ApiProperty() turnId!: string;
  @ApiProperty() kind!: string;
  @ApiProperty({ type: String, nullable: true }) actionId!: string | null;
  @ApiProperty() stream!: string;
}

export class AdventureView {
  @ApiProperty() id!: string;
  @ApiProperty({ type: String, nullable: true }) ownerId!: string | null;
  @ApiProperty() version!: number;
  @ApiProperty() title!: string;
  @ApiProperty() plotEssentials!: string;
  @ApiProperty() authorsNote!: string;
  @ApiProperty() aiInstructions!: string;
  @ApiProperty(FREE_FORM) persona!: AdventureFields['persona'];
  @ApiProperty(FREE_FORM) canon!: AdventureFields['canon'];
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  placeholders!: Record<string, string>;
  @ApiProperty({ description: "The story's current summary ('' before the first)" })
  storySummary!: string;
  @ApiProperty({
    ...FREE_FORM,
    properties: { contextTokenBudget: { type: 'number' } },
    required: ['contextTokenBudget'],
  })
  settings!: AdventureSettings;
  @ApiProperty({ type: 'array', items: FREE_FORM }) storyCards!: Array<
    Record<string, unknown> & { id: string; name: string; keys: string; entry: string }
  >;
  @ApiProperty(FREE_FORM) narrativeState!: AdventureState['narrative'];
  @ApiProperty({ type: String, nullable: true }) head!: string | null;
  @ApiProperty() canRedo!: boolean;
  @ApiProperty({ type: [ActionView] }) actions!: ActionView[];
  @ApiProperty({ description: 'Actions on the story at the head' }) total!: number;
  @ApiProperty({ description: 'More actions before the first of `actions` (page with `before`)' })
  more!: boolean;
  @ApiProperty({ type: LastNarrationView, nullable: true })
  lastNarration!: LastNarrationView | null;
  @ApiProperty({ type: TurnInFlightView, nullable: true })
  turnInFlight!: TurnInFlightView | null;
  @ApiPropertyOptional({
    type: RoomTurnsBlockView,
    description:
      'A room (more members than the owner): its turn policy and what the round waits for',
  })
  room?: RoomTurnsBlockView;
}

export class LoggedEventView {
  @ApiProperty() id!: string;
  @ApiProperty() version!: number;
  @ApiProperty() type!: string;
  @ApiProperty() schemaVersion!: number;
  @ApiProperty(FREE_FORM) data!: unknown;
  @ApiPropertyOptional(FREE_FORM) metadata?: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) recordedAt!: string;
}

export class EventsPageView {
  @ApiProperty({ type: [LoggedEventView] }) events!: LoggedEventView[];
  @ApiProperty({ type: Number, nullable: true, description: 'The `after` of the next page' })
  next!: number | null;
}
