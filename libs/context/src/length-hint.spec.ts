import { lengthHint } from './length-hint';

const TAIL = ' Finish the narration and append the state block well inside the limit.';
const ceilingOnly = (words: number) =>
  `[Hard limit: this turn must not exceed ${words} words. Write only as much as the moment ` +
  `needs — a typical turn is much shorter.${TAIL}]`;
const range = (words: number, floor: number) =>
  `[Hard limit: this turn must not exceed ${words} words, and it should not stop short of ` +
  `about ${floor}. Prefer the lower end of that range unless the scene genuinely needs more.${TAIL}]`;

describe('lengthHint', () => {
  it('gives no hint at a cap of 109 or below (under 40 words)', () => {
    expect(lengthHint(109)).toBe('');
    expect(lengthHint(50)).toBe('');
    expect(lengthHint(1)).toBe('');
  });

  it('states only a ceiling from 110 up to a cap of 304 (floor under 60 words)', () => {
    expect(lengthHint(110)).toBe(ceilingOnly(40));
    expect(lengthHint(304)).toBe(ceilingOnly(171));
  });

  it('states a range from a cap of 305: floor = 35% of the ceiling', () => {
    expect(lengthHint(305)).toBe(range(172, 60));
    expect(lengthHint(800)).toBe(range(506, 177));
  });

  it('caps the floor at 300 words', () => {
    expect(lengthHint(2400)).toBe(range(1586, 300));
    expect(lengthHint(100000)).toBe(range(67466, 300));
  });
});
