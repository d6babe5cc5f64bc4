// AI Dungeon story cards (a bare array of {keys, value, type, title, description,
// useForCharacterCreation}) and its legacy world info ({keys, entry, isNotHidden, hidden, id}).
// Keys stay a raw comma string: AID's guard keys (" Bob ") need their spaces.

import type { Codec } from '../lore.codec';
import { keyList } from '../lore.codec';
import { str, type Json } from '../lore.types';

/** AID's documented entry length; longer values may be cut by AID on import. */
export const AID_VALUE_CHARS = 1000;

export const aidCodec: Codec<{ seen: Map<string, number> }> = {
  format: 'aid',
  family: ['aid'],
  context: () => ({ seen: new Map<string, number>() }),
  read(raw, ctx, index) {
    const legacy = raw.value === undefined && typeof raw.entry === 'string';
    const keys = str(raw.keys);
    const type = str(raw.type, legacy ? 'other' : '');
    const title = str(raw.title);
    // AID itself drops a later card with the same keys and type on import, but real exports
    // hold such cards with different text (3 of one 324-card export), and each is the player's
    // work: all are kept. Only an exact copy of an earlier card is left out, and the report
    // names the card it copies (issue 27).
    const identity = JSON.stringify([
      keys,
      type,
      title,
      legacy ? str(raw.entry) : str(raw.value),
      str(raw.description),
      raw.useForCharacterCreation === true,
    ]);
    const copied = ctx.seen.get(identity);
    if (copied !== undefined) return { skip: `an exact copy of entry ${copied}; kept once` };
    ctx.seen.set(identity, index);
    const verbatim: string[] = [];
    if (raw.useForCharacterCreation === true) verbatim.push('useForCharacterCreation');
    if (legacy && (raw.isNotHidden !== undefined || raw.hidden !== undefined)) {
      verbatim.push('hidden');
    }
    return {
      card: {
        name: title.trim() || keyList({ keys, keySyntax: 'aid' })[0]?.trim() || `Card ${index + 1}`,
        keys,
        keySyntax: 'aid',
        entry: legacy ? str(raw.entry) : str(raw.value),
        type,
        notes: str(raw.description),
        // Keyless cards never enter AID's context: scripts keep configuration in them.
        ...(keys.trim() === '' && { activation: 'inert' as const }),
      },
      verbatim,
    };
  },
  write(card, base, changed, warn) {
    const out: Json = base
      ? { ...base }
      : {
          keys: '',
          value: '',
          type: card.type,
          title: card.name,
          description: card.notes,
          useForCharacterCreation: false,
        };
    const legacy = base !== null && base.value === undefined && typeof base.entry === 'string';
    if (changed('keys') || changed('keySyntax') || changed('enabled') || changed('activation')) {
      const keys = card.keySyntax === 'aid' ? card.keys : keyList(card).join(',');
      out.keys = card.enabled === false || card.activation === 'inert' ? '' : keys;
    }
    if (changed('entry')) out[legacy ? 'entry' : 'value'] = card.entry;
    if (changed('name')) out.title = card.name;
    if (changed('type')) out.type = card.type;
    if (changed('notes')) out.description = card.notes;
    if (card.enabled === false) warn('disabled cards are written keyless (inert)');
    if (card.activation === 'always') {
      warn('always-on cards have no AID equivalent (put them in Plot Essentials)');
    }
    if (card.conditions?.length) warn('secondary-key conditions');
    if (card.priority !== undefined) warn('priority');
    if (card.probability !== undefined) warn('probability');
    if (card.timing) warn('timed effects');
    if (card.group) warn('inclusion groups');
    if (card.placement?.kind === 'depth') warn('depth placement');
    if (card.placement?.kind === 'authorsNote') warn("author's-note placement");
    if (card.scan) warn('scan windows');
    if (card.recursion) warn('recursion');
    if (card.caseSensitive || card.wholeWords) warn('case-sensitive and whole-word matching');
    if (keyList(card).some((key) => /^\/.+\/[a-z]*$/.test(key))) warn('regex keys');
    if (str(out.value ?? out.entry).length > AID_VALUE_CHARS) {
      warn(`entries over ${AID_VALUE_CHARS} characters (AID may cut them)`);
    }
    return out;
  },
};
