// Builds adventure event histories for tests by playing commands through the real decider and
// projector, so every history a test starts from is one the domain could have written. Ids are
// deterministic (`action-3`, `turn-2`), and tokens are counted as words so expectations can be
// worked out by hand.

import type { Correction, StateEvent } from '@chronicle/narrative';
import type {
  AdventureCommand,
  CreateAdventure,
  DecideContext,
  RecordNarration,
} from '../adventure.commands';
import { decide } from '../adventure.decider';
import type { AdventureEvent, InputType, RecordedAdventureEvent } from '../adventure.events';
import { evolveInPlace, projectFrom } from '../adventure.projector';
import { initialState, type AdventureState } from '../adventure.state';

/** One token per whitespace-separated word: easy to count by hand in a test. */
export const wordCountTokens: DecideContext = {
  countTokens: (text) => text.split(/\s+/).filter(Boolean).length,
};

export function createAdventureCommand(
  overrides: Partial<CreateAdventure['data']> = {},
): CreateAdventure {
  return {
    type: 'CreateAdventure',
    data: {
      adventureId: 'adventure-1',
      ownerId: 'owner-1',
      openingActionId: 'opening',
      title: 'The Lighthouse',
      opening: 'You stand on the harbor wall at dusk.',
      placeholders: {},
      plotEssentials: 'The keeper vanished a week ago.',
      authorsNote: 'Keep it eerie.',
      aiInstructions: '',
      persona: { name: 'Ash', pronouns: 'they/them', description: 'A tired courier.' },
      storyCards: [
        { id: 'card-mira', name: 'Mira', keys: 'mira, keeper', entry: 'Mira keeps the light.' },
      ],
      canon: {
        rules: ['The dead stay dead.'],
        forbiddenStatusChanges: [{ from: 'dead', to: 'alive' }],
      },
      settings: {},
      ...overrides,
    },
  };
}

export interface NarrationOptions {
  text?: string;
  actionId?: string;
  /**
   * The events the model reports in its reply's state block (the decider's referee judges
   * them: a no-op is dropped, a refused one is recorded as rejected). Objects and raw lines.
   */
  reported?: Array<StateEvent | string | object>;
  /** The model's whole reply, when a test writes it itself (default: the text, then `reported`). */
  reply?: string;
  manifest?: Record<string, unknown>;
  memoriesUsed?: string[];
}

export class AdventureHistory {
  readonly events: RecordedAdventureEvent[] = [];
  // Folded in place so a long history builds in linear time; `state` hands out a copy, so a
  // state a test holds never changes under it when the history goes on.
  private readonly draft: AdventureState = projectFrom(initialState(), []);
  private copy: AdventureState | null = null;
  private counter = 0;

  constructor(readonly context: DecideContext = wordCountTokens) {}

  /** A new adventure, created from `createAdventureCommand(overrides)`. */
  static create(overrides: Partial<CreateAdventure['data']> = {}): AdventureHistory {
    const history = new AdventureHistory();
    history.run(createAdventureCommand(overrides));
    return history;
  }

  /** A fresh id with this prefix: `action-1`, `turn-2`… */
  nextId(prefix: string): string {
    this.counter += 1;
    return `${prefix}-${this.counter}`;
  }

  get state(): AdventureState {
    if (!this.copy) {
      // projectFrom's copy shares its source's card list until it writes one, and this source
      // is folded in place: the copy takes a list of its own.
      this.copy = projectFrom(this.draft, []);
      this.copy.cards = this.copy.cards.slice();
    }
    return this.copy;
  }

  get head(): string {
    return this.draft.head ?? '';
  }

  get version(): number {
    return this.draft.version;
  }

  /** Decides `command` on the current state and appends what it decided. */
  run(command: AdventureCommand): RecordedAdventureEvent[] {
    return this.append(...decide(command, this.draft, this.context));
  }

  /** Appends events as they are, at the next versions (for histories the decider would refuse). */
  append(...events: AdventureEvent[]): RecordedAdventureEvent[] {
    const recorded = events.map((event) => {
      const stored = { ...event, version: this.draft.version + 1 } as RecordedAdventureEvent;
      evolveInPlace(this.draft, stored);
      this.copy = null;
      this.events.push(stored);
      return stored;
    });
    return recorded;
  }

  /** A player action (or a continue); the turn stays in flight. */
  act(inputType: InputType, text = '', ids: { turnId?: string; actionId?: string } = {}) {
    const turnId = ids.turnId ?? this.nextId('turn');
    const actionId = ids.actionId ?? this.nextId('action');
    this.run({ type: 'SubmitAction', data: { turnId, inputType, text, actionId } });
    return { turnId, actionId: inputType === 'continue' ? null : actionId };
  }

  /** The worker's narration for the turn in flight; returns the new AI action's id. */
  narrate(options: NarrationOptions = {}): string {
    const turnId = this.draft.inFlight?.turnId ?? 'no-turn-in-flight';
    const actionId = options.actionId ?? this.nextId('action');
    this.run(narrationCommand(turnId, actionId, options));
    return actionId;
  }

  /** A whole turn: the player's action and its narration. */
  turn(inputType: InputType, text: string, narration: NarrationOptions = {}) {
    const { turnId, actionId } = this.act(inputType, text);
    const aiActionId = this.narrate(narration);
    return { turnId, playerActionId: actionId, aiActionId };
  }

  requestRetry(turnId = this.nextId('turn')): string {
    this.run({ type: 'RequestRetry', data: { turnId } });
    return turnId;
  }

  /** A retry and its new take; returns the take's id. */
  retry(narration: NarrationOptions = {}): string {
    this.requestRetry();
    return this.narrate(narration);
  }

  fail(error = 'model unreachable', attempts = 3): this {
    const turnId = this.draft.inFlight?.turnId ?? 'no-turn-in-flight';
    this.run({ type: 'RecordNarrationFailure', data: { turnId, error, attempts } });
    return this;
  }

  cancel(): this {
    const turnId = this.draft.inFlight?.turnId ?? 'no-turn-in-flight';
    this.run({ type: 'CancelTurn', data: { turnId } });
    return this;
  }

  undo(): this {
    this.run({ type: 'Undo', data: {} });
    return this;
  }

  redo(): this {
    this.run({ type: 'Redo', data: {} });
    return this;
  }

  moveHead(actionId: string): this {
    this.run({ type: 'MoveHead', data: { actionId } });
    return this;
  }

  edit(actionId: string, text: string): this {
    this.run({ type: 'EditAction', data: { actionId, text } });
    return this;
  }

  erase(actionId: string): this {
    this.run({ type: 'EraseAction', data: { actionId } });
    return this;
  }

  correct(correction: Correction, anchorActionId?: string): this {
    this.run({ type: 'CorrectNarrativeState', data: { correction, anchorActionId } });
    return this;
  }

  retcon(actionId: string, index: number): this {
    this.run({ type: 'RetconStateEvent', data: { actionId, index } });
    return this;
  }
}

/** A model's reply: the prose, then a `state` block of `lines` (JSON Lines) when there are any. */
export function modelReply(prose: string, lines: Array<StateEvent | string | object>): string {
  if (lines.length === 0) return prose;
  const body = lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line)));
  return [prose, '', '```state', ...body, '```'].join('\n');
}

export function narrationCommand(
  turnId: string,
  actionId: string,
  options: NarrationOptions = {},
): RecordNarration {
  const text = options.text ?? `The sea answers ${actionId}.`;
  return {
    type: 'RecordNarration',
    data: {
      turnId,
      actionId,
      text,
      reply: options.reply ?? modelReply(text, options.reported ?? []),
      reasoning: null,
      usage: { promptTokens: 1200, completionTokens: 80, cachedTokens: 1024 },
      model: 'offline-narrator',
      narrator: 'offline',
      finishReason: 'stop',
      contextManifest: options.manifest ?? { turnId, sections: ['history', 'reminder'] },
      latencyMs: 42,
      ...(options.memoriesUsed && { memoriesUsed: options.memoriesUsed }),
    },
  };
}

/** A long played adventure, for benchmarks and replay tests: turns with state events. */
export function playedAdventure(turns: number, narrationChars = 1500): AdventureHistory {
  const history = AdventureHistory.create();
  const filler = 'The tide climbs the black rocks and the lamp turns slowly overhead. ';
  const prose = filler.repeat(Math.ceil(narrationChars / filler.length)).slice(0, narrationChars);
  for (let index = 0; index < turns; index++) {
    // Mostly moves and status changes, a fact now and then: facts accumulate for the whole
    // story, entities do not.
    const reported: StateEvent[] =
      index === 0
        ? [
            { type: 'enter', id: 'harbor', name: 'Harbor', kind: 'place' },
            { type: 'enter', id: 'tower', name: 'Tower', kind: 'place' },
            {
              type: 'enter',
              id: 'mira',
              name: 'Mira',
              kind: 'character',
              status: 'alive',
              at: 'harbor',
            },
          ]
        : index % 10 === 0
          ? [{ type: 'fact', text: `Turn ${index} mattered.`, about: ['mira'] }]
          : [
              { type: 'move', id: 'mira', to: index % 2 === 0 ? 'harbor' : 'tower' },
              { type: 'status', id: 'mira', to: index % 4 === 0 ? 'tired' : 'alive' },
            ];
    history.turn(index % 3 === 0 ? 'say' : 'do', `look around ${index}`, {
      text: prose,
      reported,
    });
    if (index % 10 === 9) history.retry({ text: prose, reported });
  }
  return history;
}
