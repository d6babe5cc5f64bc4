import { formatPlayerInput } from './player-input.format';
import { namesItsActor, toSecondPerson } from './player-input.person';

// The predecessor's Do mode, https://help.aidungeon.com/the-do-mode: "Using Do usually adds
// 'You' to the beginning of your inputs, and converts any first-person words (I, me, my, mine,
// etc.) outside of quotes into second-person. However, if you start your 'Do' action with
// dialogue, 'My', or write 'You' yourself, the automatic 'You' will not be added."
describe('a do-action in the second person', () => {
  describe('given the help page examples', () => {
    it.each([
      [
        'Enter the throne room to tell the king of my discovery.',
        '> You enter the throne room to tell the king of your discovery.',
      ],
      ['My heart hurts. "I can\'t believe this."', '> Your heart hurts. "I can\'t believe this."'],
      [
        '"She will not get away with this!" I raise my sword.',
        '> "She will not get away with this!" You raise your sword.',
      ],
      ['I went to the throne room', '> You went to the throne room.'],
      [
        'shout, “Hey! Teachers! Leave them kids alone!” as you shake your fist at the schoolmaster.',
        '> You shout, “Hey! Teachers! Leave them kids alone!” as you shake your fist at the schoolmaster.',
      ],
    ])('when the player does %j, then the model is sent %j', (typed, sent) => {
      expect(formatPlayerInput('do', typed)).toBe(sent);
    });
  });

  describe('given first-person words', () => {
    it.each([
      [
        'I push open the gate and call for Mira to follow me',
        '> You push open the gate and call for Mira to follow you.',
      ],
      ["I'm lost, so I check my map", "> You're lost, so you check your map."],
      ['I am tired. I was never this tired', '> You are tired. You were never this tired.'],
      ['ask where am I', '> You ask where are you.'],
      ['hand her the key. It is mine', '> You hand her the key. It is yours.'],
      ['pinch myself', '> You pinch yourself.'],
      ['Me and Mira run', '> You and Mira run.'],
      ['i wave', '> You wave.'],
      ['I’ll wait', '> You’ll wait.'],
      ['climb down into the mine', '> You climb down into the mine.'],
      ['say “I know my rights” and I leave', '> You say “I know my rights” and you leave.'],
      ['whisper "my love', '> You whisper "my love.'],
    ])('when the player does %j, then the model is sent %j', (typed, sent) => {
      expect(formatPlayerInput('do', typed)).toBe(sent);
    });
  });

  describe('given words that only look first person', () => {
    it.each(['mythologise the mime', 'into the inn', 'NASA calls', 'youthfully skip'])(
      'when the player does %j, then nothing changes but the leading You',
      (typed) => {
        expect(formatPlayerInput('do', typed)).toBe(`> You ${typed}.`);
      },
    );
  });

  it('names its actor when it opens with dialogue, I, My or You', () => {
    expect(
      ['"Halt!" I cry', '“Halt!”', 'I run', "I'd run", 'My turn', 'You run'].map(namesItsActor),
    ).toEqual([true, true, true, true, true, true]);
    expect(['run', 'Inside', 'Mystery', 'youthful'].map(namesItsActor)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('leaves text without first-person words as it is', () => {
    expect(toSecondPerson('The gate creaks open.')).toBe('The gate creaks open.');
  });
});
