import { renderPersona } from './persona.render';

describe('renderPersona', () => {
  it('states name, pronouns and description in one paragraph', () => {
    expect(
      renderPersona({ name: ' Ada ', pronouns: ' she/her ', description: ' A keeper. ' }),
    ).toBe('Player character:\nYou are Ada (she/her). A keeper.');
  });

  it('accepts a name alone, or a description alone', () => {
    expect(renderPersona({ name: 'Ada', pronouns: '', description: '' })).toBe(
      'Player character:\nYou are Ada.',
    );
    expect(renderPersona({ name: '', pronouns: 'they/them', description: 'A keeper.' })).toBe(
      'Player character:\nA keeper.',
    );
  });

  it('is empty with neither a name nor a description', () => {
    expect(renderPersona({ name: ' ', pronouns: 'she/her', description: '' })).toBe('');
    expect(renderPersona(null)).toBe('');
  });
});
