import { createHash } from 'node:crypto';
import { aPlace, aState, anEntity, anItem } from '../testing/narrative.factories';
import { EMIT_REMINDER, EMIT_RULE } from './emit-rule.prompt';
import { EVENT_TYPES } from './event-shape.validator';
import { referee } from './narrative.referee';
import { parseReply } from './reply.parser';

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

describe('EMIT_RULE', () => {
  const example = EMIT_RULE.slice(EMIT_RULE.indexOf('Example'));
  const reply = example.slice(example.indexOf('\n') + 1);

  it('given its worked example, then it parses cleanly and shows every event type', () => {
    const parsed = parseReply(reply);

    expect(parsed.rejections).toEqual([]);
    expect(parsed.narration).toMatch(/^The storm drives you/);
    expect(new Set(parsed.events.map((e) => e.type))).toEqual(new Set(EVENT_TYPES));
  });

  it('given the state its example presumes, then the referee accepts every event', () => {
    // "mira, and the lantern the player carries, entered on earlier turns"
    const presumed = aState([
      anEntity('mira', { at: 'harbor' }),
      aPlace('harbor'),
      anItem('lantern', { holder: 'player' }),
    ]);
    const parsed = parseReply(reply);

    const verdict = referee(presumed, { rules: [], forbiddenStatusChanges: [] }, parsed.events);

    expect(verdict.rejected).toEqual([]);
    expect(verdict.accepted).toHaveLength(parsed.events.length);
  });

  it('given the protocol terms, then the rule states the fence, JSON Lines, omission, slugs and the player id', () => {
    for (const term of [
      'opens with ```state and closes with ```',
      'JSON Lines',
      'omit the block',
      'lower-case slugs',
      'player is the protagonist',
    ]) {
      expect(EMIT_RULE).toContain(term);
    }
  });

  it('given the prompts sit in the cached prefix, then their bytes change only deliberately', () => {
    // Changing either prompt is allowed; update these hashes in the same commit, on purpose.
    expect(sha256(EMIT_RULE)).toBe(
      '2de9bbf78e2d666e2e0a284f337c0ad3d58f05937b03784e1e800880c9e7cc93',
    );
    expect(sha256(EMIT_REMINDER)).toBe(
      '6fe4a6c6d9534f14dac217134c13fa7b907c8c9ddd0f02cf844af8b40c334a86',
    );
  });
});
