// Bounds on what a player may put into the service. Named here, once, so the API's body parser,
// its validation messages, the deciders and the README's "Limits" table agree on one number each.
// A breach is a 4xx whose message names the limit.

import { SCRIPT_LIMITS } from '@chronicle/scripting';

const MB = 1024 * 1024;

export const LIMITS = Object.freeze({
  /** One ordinary text field: an edit of an action, a canon rule, a persona description. */
  textChars: 20_000,
  /** A player's action (do, say, story) and an edit of one. */
  actionChars: 20_000,
  /** Longer prose a player writes once and keeps: card entries, the plot fields, the opening. */
  proseChars: 50_000,
  /**
   * A narration as stored: what an Output hook may return (SCRIPT_LIMITS.outputTextChars), so a
   * script's long text (a 21 KB help page) is stored as the script made it, and a longer one is
   * that script's named failure before it reaches the log.
   */
  narrationChars: SCRIPT_LIMITS.outputTextChars,
  titleChars: 200,
  personaNameChars: 80,
  personaPronounsChars: 40,
  cardNameChars: 200,
  idChars: 200,
  placeholderAnswerChars: 1_000,
  /** Story cards one adventure holds at once (real lorebooks run to thousands of entries). */
  storyCardsPerAdventure: 5_000,
  /** A lore file sent to the story-card import (JSON, .lorebook, PNG card, .charx). */
  loreFileBytes: 20 * MB,
  /** What a lore file may inflate to (a PNG's compressed chunks, a .charx zip's card.json). */
  loreInflatedBytes: 20 * MB,
  /** One imported card's source entry, kept verbatim for export, as JSON text. */
  loreRawChars: 100_000,
  /** Memories one adventure holds at once (deleted ones do not count). */
  memoriesPerAdventure: 1_000,
  /** One memory's text (a written one is at most 50 words; a player's may be longer). */
  memoryTextChars: 5_000,
  /** People in one room at once, the host included (members who left do not count). */
  membersPerRoom: 50,
  /** Invites one adventure holds at once (revoked, expired and used-up ones do not count). */
  invitesPerAdventure: 50,
  /** The most uses one invite may be given. */
  inviteMaxUses: 1_000,
  /** The longest an invite may live: 30 days. */
  inviteLifetimeSeconds: 30 * 24 * 3600,
  /** Adventures one user owns. */
  adventuresPerUser: 100,
  /** A JSON request body; a creation with dozens of full cards fits. */
  bodyBytes: 2 * MB,
  /** A script's sources (a 4 MiB Library, SCRIPT_LIMITS, escaped as JSON). */
  scriptBodyBytes: 16 * MB,
  /** An import carries a whole event log as NDJSON or JSON. */
  importBodyBytes: 20 * MB,
  /**
   * Scenario scripts: source sizes, time, memory, state and log caps (libs/scripting, which the
   * sandbox reads without depending on this lib).
   */
  scripts: SCRIPT_LIMITS,
});
