// An in-house script of Auto-Cards' shape and size (docs/scripting.md §2): a ~300 KB Library defining one
// entry function and a few hundred helpers plus data tables, hooks that call it, a config card
// created as `addStoryCard("%@%")` then renamed and pinned to the top, JSON state kept in that
// card's notes, cards made from the story every few turns, a retry check from
// `info.actionCount`, and `state.message`. Used by C25 and `npm run bench -- scripting`.
import type { ScriptDefinition } from '@chronicle/scripting';

function helpers(count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(`  function helper${i}(value, depth) {
    // Normalises a fragment of story text the way card generators do: trims, collapses
    // whitespace, strips punctuation at the ends and title-cases proper names.
    const cleaned = String(value ?? "").replace(/\\s+/g, " ").trim();
    if (depth > 3 || cleaned.length === 0) return cleaned;
    const words = cleaned.split(" ");
    for (let w = 0; w < words.length; w++) {
      const word = words[w];
      if (word.length > ${(i % 5) + 3} && /^[A-Z]/.test(word)) words[w] = word.replace(/[.,!?;:]+$/, "");
    }
    return words.join(" ").slice(0, ${200 + (i % 50)});
  }`);
  }
  return out.join('\n');
}

function tables(entries: number): string {
  const rows: string[] = [];
  for (let i = 0; i < entries; i++) {
    rows.push(`    ["word${i}", ${i % 7}, "A descriptive phrase number ${i} for the name table"]`);
  }
  return `  const NAME_TABLE = [\n${rows.join(',\n')}\n  ];`;
}

export const AUTO_CARDS_LIBRARY = `
const AutoCards = (function () {
  "use strict";
${helpers(330)}
${tables(1500)}
  const CONFIG_TITLE = "Configure Auto-Cards";
  function configCard() {
    let card = storyCards.find((c) => c.title === CONFIG_TITLE);
    if (!card) {
      addStoryCard("%@%");
      card = storyCards.find((c) => c.title === "%@%");
      card.title = CONFIG_TITLE;
      card.keys = "";
      card.entry = "Auto-Cards is enabled. Edit the notes to configure.";
    }
    const index = storyCards.indexOf(card);
    if (index > 0) storyCards.unshift(storyCards.splice(index, 1)[0]);
    return card;
  }
  function load() {
    state.AutoCards ??= { turns: 0, seen: {}, lastCount: -1, names: [] };
    return state.AutoCards;
  }
  function candidateNames(recent) {
    const names = new Set();
    const matches = recent.match(/\\b[A-Z][a-z]{3,}\\b/g) || [];
    for (const m of matches) names.add(helper7(m, 0));
    return [...names].slice(0, 5);
  }
  return function AutoCards(hook, inText) {
    if (hook === null) return;
    const ac = load();
    const config = configCard();
    if (hook === "input") return inText;
    if (hook === "context") {
      const retry = info.actionCount <= ac.lastCount;
      ac.lastCount = info.actionCount;
      if (!retry) ac.turns++;
      const recent = history.slice(-6).map((h) => h.text || h.rawText || "").join(" ");
      for (const name of candidateNames(recent)) {
        ac.seen[name] = (ac.seen[name] || 0) + 1;
        if (ac.seen[name] === 3 && !storyCards.some((c) => c.title === name)) {
          addStoryCard(name.toLowerCase(), name + " appears in the story.", "character", name, "");
          ac.names.push(name);
        }
      }
      config.description = JSON.stringify({ turns: ac.turns, names: ac.names.length, t: Date.now() % 1000 });
      for (let i = 1; i < storyCards.length && i < 6; i++) storyCards[i].entry = helper3(storyCards[i].entry, 0);
      const heading = inText.indexOf("Recent Story:");
      return heading >= 0 ? inText : inText;
    }
    if (hook === "output") {
      if (ac.turns % 5 === 0) state.message = "Auto-Cards: " + ac.names.length + " cards (turn " + ac.turns + ")";
      return inText;
    }
    return inText;
  };
})();
AutoCards(null);
`;

export function autoCardsScript(id = 'auto-cards', version = 1): ScriptDefinition {
  return {
    id,
    name: 'Auto-Cards (fixture)',
    version,
    enabled: true,
    position: 1,
    library: AUTO_CARDS_LIBRARY,
    input: 'const modifier = (text) => ({ text: AutoCards("input", text) });\nmodifier(text)',
    context: 'const modifier = (text) => ({ text: AutoCards("context", text) });\nmodifier(text)',
    output: 'const modifier = (text) => ({ text: AutoCards("output", text) });\nmodifier(text)',
  };
}
