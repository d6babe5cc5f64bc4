// Bounds on what one request may put into an adventure. Named here so the API's body parser,
// its validation messages and the decider agree on one number each.

export const LIMITS = Object.freeze({
  /** One text field: an action, an edit, the opening, a card entry, the plot essentials. */
  textChars: 20_000,
  titleChars: 200,
  personaNameChars: 80,
  personaPronounsChars: 40,
  cardNameChars: 200,
  idChars: 200,
  placeholderAnswerChars: 1_000,
  /**
   * A JSON request body. The largest ordinary body is a creation with its story cards; 1 MiB
   * holds dozens of full-length cards and still refuses a runaway upload early.
   */
  bodyBytes: 1024 * 1024,
  /**
   * An import carries a whole event log: a 10,000-event adventure with 1–3 KB narrations is
   * about 30 MB of NDJSON, so 64 MiB leaves room while bounding memory.
   */
  importBodyBytes: 64 * 1024 * 1024,
});
