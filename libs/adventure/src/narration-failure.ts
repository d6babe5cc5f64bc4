// Why a turn ended without a narration, as a stable code a client can switch on. The code is
// recorded in NarrationFailed and sent in the turn stream's `error` frame beside a message; the
// message may carry detail (the provider's words, a model name), the code never changes meaning.

export const NARRATION_FAILURE_CODES = [
  'model_unauthorized',
  'model_not_found',
  'model_rate_limited',
  'model_timeout',
  'model_unreachable',
  'model_bad_request',
  'model_stream_broken',
  'lost',
  'deadline',
  'cancelled',
  'budget',
  'internal',
] as const;

export type NarrationFailureCode = (typeof NARRATION_FAILURE_CODES)[number];

/** The plain-language meaning of each code: what happened and what the player can do. */
export const NARRATION_FAILURE_MESSAGES: Readonly<Record<NarrationFailureCode, string>> = {
  model_unauthorized:
    'The model provider refused the API key. The operator must check MODEL_API_KEY; try again once it is fixed.',
  model_not_found:
    'The model or the provider endpoint was not found. Check the model name in the adventure settings.',
  model_rate_limited:
    'The model provider is limiting requests or the quota is used up. Wait a little and try again.',
  model_timeout: 'The model took too long to answer. Try again; a shorter context may help.',
  model_unreachable:
    'The model provider could not be reached or had an internal error. Try again in a moment.',
  model_bad_request:
    'The model provider rejected the request or replied with nothing usable. Try again, or change the model or its settings.',
  model_stream_broken:
    'The model stream broke off or sent something unreadable before the narration was finished. Try again.',
  lost: 'The narration was lost: its job disappeared too many times (the queue lost its data or the workers kept stopping). Try again.',
  deadline:
    'The narration took longer than the longest a turn may run and was given up. Try again.',
  cancelled: 'The turn was cancelled.',
  budget:
    "Today's model-token budget is spent; the turn was not narrated. It resets at midnight UTC.",
  internal: 'The narration failed because of an internal error; the turn was not saved. Try again.',
};

export function isNarrationFailureCode(value: unknown): value is NarrationFailureCode {
  return (
    typeof value === 'string' && (NARRATION_FAILURE_CODES as readonly string[]).includes(value)
  );
}

// The messages earlier releases wrote, by the words that tell them apart. Used only to give a
// NarrationFailed stored before codes existed its code on read (see event.upcaster.ts).
const MESSAGE_PATTERNS: ReadonlyArray<[RegExp, NarrationFailureCode]> = [
  [/refused the API key|HTTP 40[13]/i, 'model_unauthorized'],
  [/was not found at|HTTP 404/i, 'model_not_found'],
  [/HTTP 429|quota|limiting how fast/i, 'model_rate_limited'],
  [/took longer than|timed? ?out/i, 'model_timeout'],
  [/stopped too many times/i, 'lost'],
  [
    /closed before|ended without finishing|broke off|reported an error during/i,
    'model_stream_broken',
  ],
  [
    /Nothing is listening|could not be found|Could not reach|internal error \(HTTP 5|unreachable/i,
    'model_unreachable',
  ],
  [/rejected the|only a state block|HTTP 4\d\d/i, 'model_bad_request'],
  [/cancel/i, 'cancelled'],
];

/** The code a failure message of an earlier release stands for; `internal` when none fits. */
export function failureCodeOfMessage(message: string): NarrationFailureCode {
  for (const [pattern, code] of MESSAGE_PATTERNS) if (pattern.test(message)) return code;
  return 'internal';
}
