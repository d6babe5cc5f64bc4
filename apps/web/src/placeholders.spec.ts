import { placeholderNames } from './placeholders';

describe('placeholderNames', () => {
  it('lists each ${Name} of a scenario once, in order of first appearance', () => {
    expect(placeholderNames('You are ${Name} of ${Town}; ${Name} rings the bell.')).toEqual([
      'Name',
      'Town',
    ]);
  });

  it('finds none in plain text', () => {
    expect(placeholderNames('You wake in a lighthouse. $Name {x}')).toEqual([]);
  });
});
