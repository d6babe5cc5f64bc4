// Replies for the fake model that look like a real narrator's: a few sentences
// of second-person prose, then a valid ```state block. Each reply carries a
// unique take marker ("take 7"), so a test can tell which narration a later
// prompt replays, and enters a new item under a unique id, so the referee
// accepts every line.
import type { FakeScript, RecordedRequest } from '../../support/fake-openai-server';

export interface ScriptedReply {
  take: number;
  marker: string;
  /** the prose part, as the narration should be stored */
  prose: string;
  /** the whole reply, state block included */
  text: string;
}

const SCENES = [
  'Rain needles across the harbour roofs and the lamps along the quay gutter.',
  'Somewhere below, the tide sucks at the pilings and a bell answers it.',
  'The smell of tar and wet rope follows you up the narrow stair.',
  'A gull lands on the rail, regards you with one yellow eye, and leaves.',
  'The floorboards complain under your boots; the building is older than the town.',
];

export function narration(take: number, extra = ''): ScriptedReply {
  // bracketed, so take 1 is not a substring of take 12
  const marker = `(take ${take})`;
  const scene = SCENES[take % SCENES.length];
  const prose =
    `${scene} You notice a chalk mark on the wall, a small number scratched beside it ${marker}. ` +
    `${extra}The keeper's clock ticks on, patient as ever.`.replace(/ {2,}/g, ' ');
  const item = `chalk-mark-${take}`;
  const block = [
    '```state',
    JSON.stringify({
      type: 'enter',
      id: item,
      name: `Chalk mark ${take}`,
      kind: 'item',
      desc: `A mark numbered ${take}`,
    }),
    JSON.stringify({ type: 'fact', text: `The player found chalk mark ${take}`, about: [item] }),
    '```',
  ].join('\n');
  return { take, marker, prose, text: `${prose}\n\n${block}` };
}

/** The default reply of the fake server, recording what it answered to which request. */
export class ScriptedNarrator {
  readonly replies: Array<ScriptedReply & { request: RecordedRequest }> = [];
  private next = 1;

  /** Pass to `FakeOpenAiServer.setDefaultReply`. */
  readonly reply = (request: RecordedRequest): FakeScript => {
    const reply = narration(this.next++);
    this.replies.push({ ...reply, request });
    return { text: reply.text, chunks: 6, usage: { cachedTokens: 64 } };
  };

  /** A reply with a chosen take number, for a script queued ahead of the default. */
  take(): ScriptedReply {
    return narration(this.next++);
  }

  last(): ScriptedReply & { request: RecordedRequest } {
    const reply = this.replies[this.replies.length - 1];
    if (!reply) throw new Error('the scripted narrator has not answered yet');
    return reply;
  }
}

/** The system and user texts of a chat request (or the prompt of a completion). */
export function promptOf(request: RecordedRequest): { system: string; user: string } {
  const body = request.body as {
    messages?: Array<{ role: string; content: string }>;
    prompt?: string;
  };
  if (Array.isArray(body?.messages)) {
    return {
      system: body.messages.find((m) => m.role === 'system')?.content ?? '',
      user: body.messages
        .filter((m) => m.role === 'user')
        .map((m) => m.content)
        .join('\n'),
    };
  }
  return { system: '', user: body?.prompt ?? '' };
}

export function occurrences(haystack: string, needle: string): number {
  if (needle === '') return 0;
  let count = 0;
  for (
    let at = haystack.indexOf(needle);
    at >= 0;
    at = haystack.indexOf(needle, at + needle.length)
  )
    count += 1;
  return count;
}
