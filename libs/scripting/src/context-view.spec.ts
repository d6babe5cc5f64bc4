import {
  classifyContextResult,
  fitRewrite,
  isCacheCompatible,
  renderContextView,
} from './context-view';

const parts = {
  plotEssentials: 'You keep the light.',
  lore: ['The lighthouse is old.'],
  summary: '',
  memories: [],
  history: ['You wake.', '\n> You climb the stairs.\n'],
  authorsNote: 'Gloomy.',
  frontMemory: '',
};

describe('renderContextView', () => {
  it('lays the prompt out in AID order with its headings, empty sections left out', () => {
    const view = renderContextView(parts);
    expect(view.text).toBe(
      "You keep the light.\n\nWorld Lore:\nThe lighthouse is old.\n\nRecent Story:\nYou wake.\n\n[Author's note: Gloomy.]\n\n> You climb the stairs.\n",
    );
    expect(view.memoryLength).toBe('You keep the light.\n\n'.length);
  });
});

describe('classifyContextResult', () => {
  const view = renderContextView(parts);
  const full = { mode: 'full' as const, cacheCompatible: false };
  it('given the view back or "", then unchanged (C7)', () => {
    expect(classifyContextResult(view, view.text, full)).toEqual({ change: 'unchanged' });
    expect(classifyContextResult(view, '', full)).toEqual({ change: 'unchanged' });
  });
  it('given the view plus a suffix, then append (C8)', () => {
    expect(classifyContextResult(view, `${view.text}\nX`, full)).toEqual({
      change: 'append',
      suffix: '\nX',
    });
  });
  it('given a rewrite keeping the Plot Essentials prefix, then they are not sent twice (C9)', () => {
    const result = `${view.text.slice(0, view.memoryLength)}Only this.`;
    expect(classifyContextResult(view, result, full)).toEqual({
      change: 'rewrite',
      story: 'Only this.',
      keptEssentials: true,
    });
  });
  it('append-only mode discards rewrites and needs @cache-compatible for appends', () => {
    const appendOnly = { mode: 'append-only' as const, cacheCompatible: false };
    expect(classifyContextResult(view, 'other', appendOnly).change).toBe('discarded');
    expect(classifyContextResult(view, `${view.text}X`, appendOnly).change).toBe('discarded');
    expect(
      classifyContextResult(view, `${view.text}X`, { mode: 'append-only', cacheCompatible: true })
        .change,
    ).toBe('append');
    expect(isCacheCompatible('// @cache-compatible\nmodifier(text)')).toBe(true);
  });
  it('cuts an over-budget rewrite from the front (S13)', () => {
    expect(fitRewrite('abcdef', 4)).toBe('cdef');
    expect(fitRewrite('ab', 4)).toBe('ab');
  });
});
