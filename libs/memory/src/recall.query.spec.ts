import type { StoryCard } from '@chronicle/context';
import { blendQueryVectors, recallQuery, SCENE_WEIGHT } from './recall.query';
import { cosine } from './memory.ranking';

function aCard(id: string, keys: string, entry: string, name: string): StoryCard {
  return { id, name, keys, entry, type: 'character' };
}

describe('recallQuery (what a turn recalls with)', () => {
  const scene = ['You walk the harbour at dusk.', 'Gulls cry over the fishing boats.'];

  it('given a player action, then the action leads and the scene is kept apart as the weak signal', () => {
    const query = recallQuery({ actionText: 'Ask where the silver key is', scene, cards: [] });
    expect(query.focus).toBe('Ask where the silver key is');
    expect(query.scene).toContain('Gulls cry');
  });

  it('given an action that mentions a card by its key, then the card name joins the focus once', () => {
    const cards = [
      aCard('c1', 'smith, forge', 'A burly smith.', 'Brannoc the Smith'),
      aCard('c2', 'lighthouse', 'A tall tower.', 'The Lighthouse'),
    ];
    const query = recallQuery({
      actionText: 'I go back to the smith and the forge',
      scene,
      cards,
    });
    expect(query.focus).toBe('I go back to the smith and the forge\nBrannoc the Smith');
  });

  it('given a card name the action already says, then it is not repeated', () => {
    const cards = [aCard('c1', 'mira', 'A sailor.', 'Mira')];
    const query = recallQuery({ actionText: 'Call Mira over', scene, cards });
    expect(query.focus).toBe('Call Mira over');
  });

  it('given no action (a continue or a retry), then the scene is the focus, as the seed searched', () => {
    const query = recallQuery({ actionText: '  ', scene, cards: [] });
    expect(query.focus).toBe(scene.join('\n\n'));
    expect(query.scene).toBe('');
  });
});

describe('blendQueryVectors', () => {
  it('given a focus and a scene, then the blend stays nearer the focus than the scene', () => {
    const focus = Float32Array.from([2, 0, 0]);
    const sceneVector = Float32Array.from([0, 5, 0]);
    const blended = blendQueryVectors(focus, sceneVector);
    expect(cosine(blended, focus)).toBeGreaterThan(cosine(blended, sceneVector));
    expect(cosine(blended, sceneVector)).toBeGreaterThan(0);
    expect(SCENE_WEIGHT).toBeLessThan(0.5);
  });

  it('given no scene, then the blend is the focus made unit length', () => {
    const blended = blendQueryVectors([3, 4], null);
    expect(Array.from(blended)).toEqual([expect.closeTo(0.6), expect.closeTo(0.8)]);
  });
});
