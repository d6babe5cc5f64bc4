import { AdventureHistory } from '@chronicle/adventure/testing';
import {
  fuseRankings,
  lexicalQuery,
  matchingLexemes,
  passagesToIndex,
  RRF_K,
} from './passage.fusion';
import { onPath, pathIndex, type PassageRef } from './story-path.index';

/** Every passage the tree holds, as the index would store them. */
function indexed(history: AdventureHistory): PassageRef[] {
  return passagesToIndex(history.state, 0);
}

function usable(history: AdventureHistory): string[] {
  const path = pathIndex(history.state);
  return indexed(history)
    .filter((passage) => onPath(passage, path))
    .map((passage) => passage.actionId);
}

describe('path filtering (which stored passages a turn may recall)', () => {
  it('given a story played on, then every action and narration on the path is usable', () => {
    const history = AdventureHistory.create();
    const first = history.turn('do', 'Find the silver key');
    const second = history.turn('say', 'Where is the lighthouse?');
    expect(usable(history)).toEqual(
      expect.arrayContaining([
        first.playerActionId,
        first.aiActionId,
        second.playerActionId,
        second.aiActionId,
      ]),
    );
  });

  it('given an undo, when the turn is undone, then its action and narration are not recalled', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'Open the chest');
    const undone = history.turn('do', 'Burn the map');
    history.undo().undo();
    expect(usable(history)).not.toContain(undone.aiActionId);
    expect(usable(history)).not.toContain(undone.playerActionId);
    // Still stored (a redo brings it back), just not on this path.
    expect(indexed(history).map((p) => p.actionId)).toContain(undone.aiActionId);
  });

  it('given a retry in flight, then the take it replaces is not recalled', () => {
    const history = AdventureHistory.create();
    const turn = history.turn('do', 'Climb the tower');
    history.requestRetry();
    expect(usable(history)).not.toContain(turn.aiActionId);
    expect(usable(history)).toContain(turn.playerActionId);
  });

  it('given two branches, when the head moves to the other, then the first branch does not leak', () => {
    const history = AdventureHistory.create();
    const shared = history.turn('do', 'Walk to the fork');
    const left = history.turn('do', 'Take the left road');
    history.moveHead(shared.aiActionId);
    const right = history.turn('do', 'Take the right road');
    const ids = usable(history);
    expect(ids).toContain(right.aiActionId);
    expect(ids).toContain(shared.aiActionId);
    expect(ids).not.toContain(left.aiActionId);
    expect(ids).not.toContain(left.playerActionId);
  });

  it('given an edited action, then only its current text version is usable', () => {
    const history = AdventureHistory.create();
    const turn = history.turn('do', 'Greet the smith');
    const before = indexed(history).find((p) => p.actionId === turn.aiActionId)!;
    history.edit(turn.aiActionId, 'The smith scowls.');
    const path = pathIndex(history.state);
    expect(onPath(before, path)).toBe(false);
    const after = passagesToIndex(history.state, before.textVersion);
    expect(after).toEqual([
      expect.objectContaining({ actionId: turn.aiActionId, textVersion: history.version }),
    ]);
    expect(onPath(after[0], path)).toBe(true);
  });

  it('given an erased action, then it is neither indexed nor recalled', () => {
    const history = AdventureHistory.create();
    const turn = history.turn('do', 'Whisper the password');
    history.erase(turn.playerActionId!);
    expect(indexed(history).map((p) => p.actionId)).not.toContain(turn.playerActionId);
    expect(usable(history)).not.toContain(turn.playerActionId);
  });
});

describe('reciprocal rank fusion', () => {
  it('given two rankings, then each passage scores 1/(60 + rank) per ranking it is in', () => {
    const fused = fuseRankings(['a', 'b', 'c'], ['c', 'd']);
    const c = fused.find((p) => p.actionId === 'c')!;
    expect(c).toEqual({
      actionId: 'c',
      lexicalRank: 3,
      vectorRank: 1,
      fused: 1 / (RRF_K + 3) + 1 / (RRF_K + 1),
    });
    expect(fused[0].actionId).toBe('c');
  });

  it('given a passage in one ranking only, then its other rank is null', () => {
    const fused = fuseRankings(['a'], ['b']);
    expect(fused).toEqual([
      { actionId: 'a', lexicalRank: 1, vectorRank: null, fused: 1 / (RRF_K + 1) },
      { actionId: 'b', lexicalRank: null, vectorRank: 1, fused: 1 / (RRF_K + 1) },
    ]);
  });

  it('given equal fused scores, then the better single rank wins, then the lexical one', () => {
    // p and q tie at rank 1 each, x and y at rank 2 each: the lexical one of each pair first.
    const fused = fuseRankings(['p', 'x'], ['q', 'y']);
    expect(fused.map((p) => p.actionId)).toEqual(['p', 'q', 'x', 'y']);
  });

  it('given empty rankings, then nothing is recalled', () => {
    expect(fuseRankings([], [])).toEqual([]);
  });
});

describe('lexicalQuery', () => {
  it("given a player's action, then its words are ORed once each, lower-cased, without syntax", () => {
    expect(lexicalQuery("Where's the Silver key? (the KEY!) & | ! <->")).toBe(
      'where | s | the | silver | key',
    );
  });

  it('given no words, then the query is empty', () => {
    expect(lexicalQuery(' ?! ')).toBe('');
  });
});

describe('matchingLexemes', () => {
  const terms = [
    { lexeme: 'ask', passages: 700 },
    { lexeme: 'kestrel', passages: 3 },
    { lexeme: 'lantern', passages: 450 },
    { lexeme: 'chapel', passages: 90 },
  ];

  it('given a story larger than the budget, then the rarest lexemes are matched while the passages they hold fit it', () => {
    expect(matchingLexemes(terms, 600)).toEqual(['kestrel', 'chapel', 'lantern']);
    expect(matchingLexemes(terms, 100)).toEqual(['kestrel', 'chapel']);
  });

  it('given only common lexemes, then the rarest one is still matched', () => {
    expect(
      matchingLexemes(
        [
          { lexeme: 'ask', passages: 700 },
          { lexeme: 'went', passages: 900 },
        ],
        100,
      ),
    ).toEqual(['ask']);
  });

  it('given a story within the budget, then every lexeme is matched, each once, as before', () => {
    expect(matchingLexemes([...terms, { lexeme: 'ask', passages: 700 }], 10_000)).toEqual([
      'kestrel',
      'chapel',
      'lantern',
      'ask',
    ]);
  });

  it('given a lexeme no passage holds, then it costs nothing and is matched', () => {
    expect(matchingLexemes([{ lexeme: 'zyx', passages: 0 }, ...terms], 5)).toEqual([
      'zyx',
      'kestrel',
    ]);
  });

  it('given no lexeme (only stop words), then nothing is matched', () => {
    expect(matchingLexemes([], 100)).toEqual([]);
  });
});
