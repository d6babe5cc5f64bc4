import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

export type ModelErrorKind =
  | 'auth'
  | 'not_found'
  | 'rate_limited'
  | 'unreachable'
  | 'timeout'
  | 'server'
  | 'bad_request'
  | 'cut'
  | 'cancelled';

export interface ModelErrorInit {
  kind: ModelErrorKind;
  /** For the operator and the logs: may name MODEL_BASE_URL and quote the provider. */
  message: string;
  /** For the player: never names the endpoint or quotes the provider (default: by kind). */
  playerMessage?: string;
  retryable: boolean;
  retryAfterMs?: number;
  status?: number;
}

// What a player is told, by kind, where the operator's message may name the endpoint or quote
// the provider. Kinds whose operator message holds neither (timeout, cut, cancelled) tell the
// player the same words.
const PLAYER_MESSAGES: Partial<Record<ModelErrorKind, string>> = {
  auth: "The model provider refused this installation's credentials; the operator has to fix the model configuration.",
  not_found:
    "The model this adventure names is not available from the provider; choose another in the adventure's settings, or ask the operator.",
  rate_limited:
    "The model provider is busy, or this installation's quota with it is used up; try again later.",
  unreachable: 'The model provider could not be reached; try again later.',
  server: 'The model provider had an internal error; try again.',
  bad_request:
    "The model provider refused the request (it may be too long for the model, or a setting unsupported); try again or change the adventure's model settings.",
};

/**
 * A model failure in words a player or operator can act on. It never holds
 * the provider's error object (whose message may echo part of the key), only
 * scrubbed text, so it is safe to log and serialise; what reaches a player (an
 * event, an HTTP answer, a stream frame) is `playerMessage`.
 */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  readonly kind: ModelErrorKind;
  readonly playerMessage: string;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly status?: number;

  constructor(init: ModelErrorInit) {
    super(init.message);
    this.kind = init.kind;
    this.playerMessage = init.playerMessage ?? PLAYER_MESSAGES[init.kind] ?? init.message;
    this.retryable = init.retryable;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    if (init.status !== undefined) this.status = init.status;
  }

  toJSON(): ModelErrorInit & { name: string } {
    return {
      name: this.name,
      kind: this.kind,
      message: this.message,
      retryable: this.retryable,
      ...(this.retryAfterMs !== undefined && { retryAfterMs: this.retryAfterMs }),
      ...(this.status !== undefined && { status: this.status }),
    };
  }
}

export function isModelError(error: unknown): error is ModelError {
  return error instanceof ModelError;
}

/**
 * The stable code of each kind of model failure: the code NarrationFailed records (and the
 * metrics count failed calls by). A provider's 5xx is `model_unreachable`: to the player it is
 * the same as a provider that cannot be reached (try again in a moment).
 */
export const MODEL_ERROR_CODES = {
  auth: 'model_unauthorized',
  not_found: 'model_not_found',
  rate_limited: 'model_rate_limited',
  unreachable: 'model_unreachable',
  timeout: 'model_timeout',
  server: 'model_unreachable',
  bad_request: 'model_bad_request',
  cut: 'model_stream_broken',
  cancelled: 'cancelled',
} as const satisfies Record<ModelErrorKind, string>;

/** The stable code of a failed model call: its kind's, `internal` for anything not a ModelError. */
export function modelErrorCode(error: unknown): string {
  return isModelError(error) ? MODEL_ERROR_CODES[error.kind] : 'internal';
}

const REDACTED = '[redacted]';

/**
 * Removes the key and anything shaped like a key from text that came from
 * outside (a provider's error body can quote the key it refused, in part).
 */
export function scrubSecret(text: string, secret?: string): string {
  let out = text;
  if (secret && secret.length > 0) {
    out = out.split(secret).join(REDACTED);
    // providers quote keys shortened ("sk-abc1***wxyz"): drop long enough fragments too
    if (secret.length >= 12) {
      out = out.split(secret.slice(0, 8)).join(REDACTED);
      out = out.split(secret.slice(-6)).join(REDACTED);
    }
  }
  return out
    .replace(/Bearer\s+\S+/gi, `Bearer ${REDACTED}`)
    .replace(/\b(sk|pk|rk|or|key)-[A-Za-z0-9_*.-]{4,}/g, REDACTED);
}

/**
 * Retry-After is either delay-seconds or an HTTP date; OpenAI also sends the
 * non-standard retry-after-ms. Returns undefined when absent or unreadable.
 */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined,
  nowMs: number,
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) {
    return Math.max(0, Math.round(Number(ms)));
  }
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

export interface ErrorContext {
  model: string;
  baseURL: string;
  timeoutMs: number;
  apiKey?: string;
  /** what was being asked, for the message: "narration", "embeddings" … */
  operation: string;
  nowMs?: number;
}

// A daily cap or an exhausted balance will not clear within a job's backoff;
// a burst limit will.
const QUOTA_WORDS =
  /quota|per[ -]?day|daily|billing|credits?|insufficient|balance|exceeded your current/i;

function providerDetail(error: APIError, apiKey?: string): string {
  const body = error.error as { message?: unknown } | undefined;
  const raw =
    body && typeof body.message === 'string'
      ? body.message
      : typeof error.error === 'string'
        ? error.error
        : '';
  const trimmed = raw.length > 300 ? `${raw.slice(0, 300)}…` : raw;
  return scrubSecret(trimmed, apiKey);
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Maps anything the openai package (or the network under it) throws to a ModelError. */
export function toModelError(error: unknown, ctx: ErrorContext): ModelError {
  if (error instanceof ModelError) return error;
  const where = scrubSecret(ctx.baseURL, ctx.apiKey);

  if (error instanceof APIUserAbortError) {
    return new ModelError({
      kind: 'cancelled',
      retryable: false,
      message: `The ${ctx.operation} request was cancelled.`,
    });
  }
  if (error instanceof APIConnectionTimeoutError) {
    return timeoutError(ctx);
  }
  if (error instanceof APIConnectionError) {
    return unreachableError(networkCode(error), where);
  }
  if (error instanceof APIError && error.status !== undefined) {
    return fromStatus(error, ctx, where);
  }
  if (error instanceof APIError) {
    // an error object sent inside an otherwise good stream: the stream broke, with a reason
    const detail = providerDetail(error, ctx.apiKey);
    return new ModelError({
      kind: 'cut',
      retryable: true,
      message: `The model provider reported an error during ${ctx.operation}${detail ? `: ${detail}` : '.'}`,
    });
  }
  const code = networkCode(error);
  if (code) return unreachableError(code, where);
  const text = scrubSecret(error instanceof Error ? error.message : String(error), ctx.apiKey);
  return new ModelError({
    kind: 'server',
    retryable: true,
    message: `The ${ctx.operation} request failed unexpectedly: ${text}`,
  });
}

export function timeoutError(ctx: ErrorContext): ModelError {
  return new ModelError({
    kind: 'timeout',
    retryable: true,
    message: `The model "${ctx.model}" took longer than ${seconds(ctx.timeoutMs)} to answer the ${ctx.operation} request. A large local model may need a longer timeout, a smaller prompt or a faster machine.`,
  });
}

export function cutError(ctx: ErrorContext, received: string): ModelError {
  return new ModelError({
    kind: 'cut',
    retryable: true,
    message: `The connection to the model provider closed before the ${ctx.operation} was finished (${received}). It will be tried again.`,
  });
}

function unreachableError(code: string | undefined, where: string): ModelError {
  const reason =
    code === 'ECONNREFUSED'
      ? `Nothing is listening at ${where}: start the model server (for example Ollama) or fix MODEL_BASE_URL.`
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? `The host in ${where} could not be found: check MODEL_BASE_URL.`
        : `Could not reach the model provider at ${where}${code ? ` (${code})` : ''}: check that it is running and that MODEL_BASE_URL is right.`;
  return new ModelError({ kind: 'unreachable', retryable: true, message: reason });
}

function fromStatus(error: APIError, ctx: ErrorContext, where: string): ModelError {
  const status = error.status as number;
  const detail = providerDetail(error, ctx.apiKey);
  const suffix = detail ? ` The provider said: ${detail}` : '';
  if (status === 401 || status === 403) {
    return new ModelError({
      kind: 'auth',
      status,
      retryable: false,
      message: `The model provider at ${where} refused the API key (HTTP ${status}): check the API key (MODEL_API_KEY) and that it may use the model "${ctx.model}".`,
    });
  }
  if (status === 404) {
    return new ModelError({
      kind: 'not_found',
      status,
      retryable: false,
      message: `The model "${ctx.model}" or the endpoint path was not found at ${where} (HTTP 404): check the model name and that MODEL_BASE_URL ends at the API root (for example …/v1).${suffix}`,
    });
  }
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(error.headers, ctx.nowMs ?? Date.now());
    const quota = QUOTA_WORDS.test(detail) || QUOTA_WORDS.test(String(error.code ?? ''));
    const wait =
      retryAfterMs !== undefined ? ` The provider asks to wait ${seconds(retryAfterMs)}.` : '';
    return new ModelError({
      kind: 'rate_limited',
      status,
      retryable: !quota,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
      message: quota
        ? `The model provider's quota or daily cap for this key is used up (HTTP 429): wait for it to reset or add credit.${suffix}`
        : `The model provider is limiting how fast requests may be sent (HTTP 429, a burst limit); the turn will be tried again shortly.${wait}`,
    });
  }
  if (status === 408) {
    return timeoutError(ctx);
  }
  if (status >= 500) {
    return new ModelError({
      kind: 'server',
      status,
      retryable: true,
      message: `The model provider had an internal error (HTTP ${status}) during ${ctx.operation}.${suffix}`,
    });
  }
  return new ModelError({
    kind: 'bad_request',
    status,
    retryable: status === 409,
    message: `The model provider rejected the ${ctx.operation} request for "${ctx.model}" (HTTP ${status}).${suffix}`,
  });
}
