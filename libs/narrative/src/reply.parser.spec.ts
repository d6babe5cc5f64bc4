import { aBlock, aReply } from '../testing/narrative.factories';
import {
  MAX_BLOCK_BYTES,
  MAX_EVENTS_PER_BLOCK,
  MAX_FACT_CHARS,
  MAX_NAME_CHARS,
} from './narrative.limits';
import { parseReply } from './reply.parser';

const wounded = { type: 'status', id: 'mira', to: 'wounded' };
const toHarbor = { type: 'move', id: 'mira', to: 'harbor' };

describe('parseReply', () => {
  it('given narration and a block, then the block leaves the narration and its events are read', () => {
    const parsed = parseReply(aReply('Mira falls.', [wounded]));

    expect(parsed).toEqual({
      narration: 'Mira falls.',
      events: [wounded],
      rejections: [],
      onlyBlock: false,
      truncated: false,
    });
  });

  it('given a reply without a block, then it is all narration and there are no events', () => {
    const parsed = parseReply('  The tide turns.\n');

    expect(parsed.narration).toBe('The tide turns.');
    expect(parsed.events).toEqual([]);
    expect(parsed.rejections).toEqual([]);
    expect(parsed.onlyBlock).toBe(false);
  });

  it('given two blocks, then the last one wins and both leave the narration', () => {
    const reply = `First.\n${aBlock([wounded])}\nSecond.\n${aBlock([toHarbor])}`;

    const parsed = parseReply(reply);

    expect(parsed.events).toEqual([toHarbor]);
    expect(parsed.narration).toBe('First.\n\nSecond.');
  });

  it('given a block in mid-reply, then the prose around it is joined and nothing of the block remains', () => {
    const parsed = parseReply(`The door opens.\n\n${aBlock([wounded])}\n\nMira gasps.`);

    expect(parsed.narration).toBe('The door opens.\n\nMira gasps.');
    expect(parsed.narration).not.toContain('state');
    expect(parsed.events).toEqual([wounded]);
  });

  it('given a block with no closing fence, then complete lines count and the reply is marked truncated', () => {
    const parsed = parseReply(`Night falls.\n${aBlock([wounded, toHarbor], false)}`);

    expect(parsed.truncated).toBe(true);
    expect(parsed.events).toEqual([wounded, toHarbor]);
    expect(parsed.rejections).toEqual([]);
    expect(parsed.narration).toBe('Night falls.');
  });

  it('given an unclosed block cut mid-line, then the last line is rejected as truncated with a fix', () => {
    const parsed = parseReply(
      `Night falls.\n${aBlock([wounded, '{"type":"fact","text":"Mi'], false)}`,
    );

    expect(parsed.events).toEqual([wounded]);
    expect(parsed.rejections).toHaveLength(1);
    expect(parsed.rejections[0]).toMatchObject({
      line: '{"type":"fact","text":"Mi',
      reason: 'truncated',
    });
    expect(parsed.rejections[0].fix).toMatch(/Finish the narration sooner/);
  });

  it('given a closed block with a broken line, then the line is invalid JSON, not truncated', () => {
    const parsed = parseReply(aReply('x', [wounded, '{"type":"fact","text":"Mi']));

    expect(parsed.truncated).toBe(false);
    expect(parsed.rejections[0].reason).toBe('not valid JSON');
  });

  it('given non-JSON and unknown-type lines among good ones, then each bad line is rejected and the good lines count', () => {
    const parsed = parseReply(
      aReply('x', [
        wounded,
        'Mira is now wounded.',
        { type: 'teleport', id: 'mira' },
        toHarbor,
        '42',
      ]),
    );

    expect(parsed.events).toEqual([wounded, toHarbor]);
    expect(parsed.rejections.map((r) => [r.line, r.reason])).toEqual([
      ['Mira is now wounded.', 'not valid JSON'],
      ['{"type":"teleport","id":"mira"}', 'unknown type "teleport"'],
      ['42', 'not a JSON object'],
    ]);
    expect(parsed.rejections[1].fix).toContain('enter, status, move, gain, lose, fact');
  });

  it('given a JSON array instead of JSON Lines, then its elements are the events', () => {
    const parsed = parseReply(
      `x\n\`\`\`state\n${JSON.stringify([wounded, toHarbor], null, 2)}\n\`\`\``,
    );

    expect(parsed.events).toEqual([wounded, toHarbor]);
    expect(parsed.rejections).toEqual([]);
  });

  it('given an array written one element per line with commas, then each element is read', () => {
    const lines = ['[', `${JSON.stringify(wounded)},`, JSON.stringify(toHarbor), ']'];

    expect(parseReply(aReply('x', lines)).events).toEqual([wounded, toHarbor]);
  });

  it('given an object pretty-printed over several lines, then it is read as one event', () => {
    const parsed = parseReply(aReply('x', [JSON.stringify(wounded, null, 2), toHarbor]));

    expect(parsed.events).toEqual([wounded, toHarbor]);
    expect(parsed.rejections).toEqual([]);
  });

  it('given a closing fence glued to the last line, then the line is read and the block is closed', () => {
    const parsed = parseReply(`x\n\`\`\`state\n${JSON.stringify(wounded)}\`\`\`\nAfterwards.`);

    expect(parsed.events).toEqual([wounded]);
    expect(parsed.truncated).toBe(false);
    expect(parsed.narration).toBe('x\n\nAfterwards.');
  });

  it('given an opening fence at the end of a narration line, then the prose before it is kept', () => {
    const parsed = parseReply(`She runs. \`\`\`state\n${JSON.stringify(wounded)}\n\`\`\``);

    expect(parsed.narration).toBe('She runs.');
    expect(parsed.events).toEqual([wounded]);
  });

  it('given a reply that is only a block, then onlyBlock is true so the turn fails instead of storing nothing', () => {
    const parsed = parseReply(`\n${aBlock([wounded])}\n`);

    expect(parsed.onlyBlock).toBe(true);
    expect(parsed.narration).toBe('');
    expect(parsed.events).toEqual([wounded]);
  });

  it('given an empty reply, then onlyBlock is true: there is no narration to store', () => {
    expect(parseReply('   \n ').onlyBlock).toBe(true);
  });

  it('given a json fence that is not labelled state, then it stays in the narration and is not read', () => {
    const parsed = parseReply(`A sign reads:\n\`\`\`json\n${JSON.stringify(wounded)}\n\`\`\``);

    expect(parsed.events).toEqual([]);
    expect(parsed.narration).toContain('```json');
  });

  it('given CRLF line endings and an upper-case info string, then the block is still found', () => {
    const parsed = parseReply(`x\r\n\`\`\`State\r\n${JSON.stringify(wounded)}\r\n\`\`\`\r\n`);

    expect(parsed.events).toEqual([wounded]);
    expect(parsed.narration).toBe('x');
  });

  it('given an empty block, then there are no events and no rejections', () => {
    const parsed = parseReply('x\n```state\n```');

    expect(parsed).toMatchObject({ narration: 'x', events: [], rejections: [] });
  });

  it('given ids and statuses in mixed case, then they are lower-cased; free text keeps its case', () => {
    const parsed = parseReply(
      aReply('x', [
        { type: 'enter', id: 'Mira', name: 'Mira  Vey', kind: 'Character', status: 'Alive' },
      ]),
    );

    expect(parsed.events).toEqual([
      { type: 'enter', id: 'mira', name: 'Mira Vey', kind: 'character', status: 'alive' },
    ]);
  });

  it('given an id that is not a slug, then the line is rejected and the fix suggests one', () => {
    const parsed = parseReply(aReply('x', [{ type: 'move', id: 'old mill', to: 'harbor' }]));

    expect(parsed.events).toEqual([]);
    expect(parsed.rejections[0].reason).toBe('"id" is not a lower-case slug');
    expect(parsed.rejections[0].fix).toContain('"old-mill"');
  });

  it(`given a name over ${MAX_NAME_CHARS} characters, then the enter is rejected with the limit in the fix`, () => {
    const parsed = parseReply(
      aReply('x', [{ type: 'enter', id: 'bob', name: 'B'.repeat(81), kind: 'character' }]),
    );

    expect(parsed.rejections[0].reason).toBe('"name" is 81 characters, over the limit of 80');
    expect(parsed.rejections[0].fix).toBe('Shorten "name" to at most 80 characters.');
  });

  it(`given fact text over ${MAX_FACT_CHARS} characters or a missing field, then each is rejected`, () => {
    const parsed = parseReply(
      aReply('x', [
        { type: 'fact', text: 'a'.repeat(301) },
        { type: 'gain', holder: 'player' },
        { type: 'enter', id: 'x', name: 'X', kind: 'dragon' },
      ]),
    );

    expect(parsed.rejections.map((r) => r.reason)).toEqual([
      '"text" is 301 characters, over the limit of 300',
      '"item" is missing or not a string',
      'unknown kind "dragon"',
    ]);
  });

  it('given optional fields set to null, then they count as absent', () => {
    const parsed = parseReply(
      aReply('x', [
        { type: 'enter', id: 'bob', name: 'Bob', kind: 'character', at: null, desc: null },
      ]),
    );

    expect(parsed.events).toEqual([{ type: 'enter', id: 'bob', name: 'Bob', kind: 'character' }]);
  });

  it(`given more than ${MAX_EVENTS_PER_BLOCK} lines, then the first ${MAX_EVENTS_PER_BLOCK} are read and the rest is one rejection with a fix`, () => {
    const lines = Array.from({ length: 100 }, (_, i) => ({ type: 'fact', text: `fact ${i}` }));

    const parsed = parseReply(aReply('x', lines));

    expect(parsed.events).toHaveLength(MAX_EVENTS_PER_BLOCK);
    expect(parsed.rejections).toHaveLength(1);
    expect(parsed.rejections[0].reason).toBe(
      'over the limit of 64 events per block; 36 more not read',
    );
    expect(parsed.rejections[0].fix).toMatch(/at most 64 events/);
  });

  it(`given a JSON array of more than ${MAX_EVENTS_PER_BLOCK} events, then the same limit applies`, () => {
    const events = Array.from({ length: 70 }, (_, i) => ({ type: 'fact', text: `fact ${i}` }));

    const parsed = parseReply(`x\n\`\`\`state\n${JSON.stringify(events)}\n\`\`\``);

    expect(parsed.events).toHaveLength(MAX_EVENTS_PER_BLOCK);
    expect(parsed.rejections[0].reason).toMatch(/6 more not read/);
  });

  it(`given a block over ${MAX_BLOCK_BYTES} bytes, then reading stops at a whole line and the rest is rejected`, () => {
    const line = JSON.stringify({ type: 'fact', text: 'é'.repeat(290) });
    const lines = Array.from({ length: 40 }, () => line);

    const parsed = parseReply(aReply('x', lines));

    const readBytes = parsed.events.length * (Buffer.byteLength(line) + 1);
    expect(readBytes).toBeLessThanOrEqual(MAX_BLOCK_BYTES);
    expect(readBytes + Buffer.byteLength(line) + 1).toBeGreaterThan(MAX_BLOCK_BYTES);
    expect(parsed.rejections).toHaveLength(1);
    expect(parsed.rejections[0].reason).toMatch(
      /^block over 16384 bytes; \d+ more line\(s\) not read$/,
    );
  });

  it('given one huge line, then the rejection stores a clipped copy of it', () => {
    const parsed = parseReply(aReply('x', [`{"type":"fact","text":"${'z'.repeat(20000)}`]));

    expect(parsed.rejections).toHaveLength(1);
    expect(parsed.rejections[0].line.length).toBeLessThanOrEqual(300);
  });

  it("given a player's action text containing a state fence, then it is prose: only model output is parsed", () => {
    // The API stores the player's text as written and never hands it to parseReply; the model's
    // reply to it is what is parsed. The fence the player typed reaches the state through no path.
    const playerText = `I scrawl on the wall:\n${aBlock([{ type: 'status', id: 'mira', to: 'dead' }])}`;
    const modelReply = 'You scrawl something on the wall. Mira laughs.';

    const parsed = parseReply(modelReply);

    expect(parsed.events).toEqual([]);
    expect(parsed.narration).toBe(modelReply);
    expect(playerText).toContain('```state');
  });
});
