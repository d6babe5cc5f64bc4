export * from './context.types';
export * from './tokenizer';
export * from './length-hint';
export * from './persona.render';
export * from './story-cards.match';
export * from './history.window';
export * from './prompt-cache';
export * from './memory.budget';
export {
  AUTHORS_NOTE_DEPTH,
  CARD_BUDGET_SHARE,
  MIN_AVAILABLE,
  NPC_WINDOW,
  SEPARATOR,
  assembleContext,
  assembleContextSync,
  buildContext,
  contextBudget,
} from './context.builder';
export * from './lore/lore.keys';
export * from './lore/lore.macros';
export {
  DEFAULT_PRIORITY,
  MAX_LORE_RECURSION,
  activateLore,
  compileLore,
  isStaticCard,
  mentionedCards,
  staticLore,
} from './lore/lore.activate';
