// A LongMemEval history played into a fresh adventure: each user turn a `story` action (stored
// as written, where `do` would rewrite its person), each assistant turn that action's narration,
// both recorded through the API's own command handler as the API and the context worker record
// them, with no model call. Turns of one role in a row are joined into one action (the story
// alternates), an assistant turn with no action before it narrates a `continue`.
import { randomUUID } from 'node:crypto';
import { LIMITS } from '@chronicle/adventure';
import type { AdventureCommandHandler } from '@chronicle/adventure-store';
import type { Turn } from './dataset';

const ACTOR = { actor: 'bench:recall' };

/** Consecutive turns of one role as one text, as the story alternates player and narrator. */
export function alternating(turns: readonly Turn[]): { role: Turn['role']; text: string }[] {
  const joined: { role: Turn['role']; text: string }[] = [];
  for (const turn of turns) {
    if (turn.content.trim() === '') continue;
    const last = joined.at(-1);
    if (last?.role === turn.role) last.text = `${last.text}\n\n${turn.content}`;
    else joined.push({ role: turn.role, text: turn.content });
  }
  return joined;
}

/** Plays `turns` onto the adventure (at its opening); how many actions were written. */
export async function playHistory(
  adventures: AdventureCommandHandler,
  adventureId: string,
  turns: readonly Turn[],
): Promise<number> {
  let inFlight: string | null = null;
  let written = 0;
  const submit = async (inputType: 'story' | 'continue', text: string): Promise<string> => {
    const id = randomUUID();
    const turnId = randomUUID();
    await adventures.handle(
      adventureId,
      {
        type: 'SubmitAction',
        key: id,
        data: { turnId, inputType, text: text.slice(0, LIMITS.actionChars), actionId: id },
      },
      ACTOR,
    );
    if (inputType === 'story') written++;
    return turnId;
  };
  const narrate = async (text: string) => {
    const turnId = inFlight ?? (await submit('continue', ''));
    const id = randomUUID();
    await adventures.handle(
      adventureId,
      {
        type: 'RecordNarration',
        key: id,
        data: {
          turnId,
          actionId: id,
          text: text.slice(0, LIMITS.narrationChars),
          reply: text.slice(0, LIMITS.narrationChars),
          usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 },
          model: 'longmemeval-recorded',
          narrator: 'offline',
          finishReason: 'stop',
          contextManifest: {},
          latencyMs: 0,
        },
      },
      ACTOR,
    );
    inFlight = null;
    written++;
  };
  for (const turn of alternating(turns)) {
    if (turn.role === 'user') inFlight = await submit('story', turn.text);
    else await narrate(turn.text);
  }
  // A history that ends on the user's turn leaves it in flight, and a dry run (as a real
  // action) would be refused: it gets a narration of its own.
  if (inFlight !== null) await narrate('(no reply)');
  return written;
}
