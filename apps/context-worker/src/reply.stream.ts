import type { Logger } from '@nestjs/common';
import type { AdventureState, Usage } from '@chronicle/adventure';
import type { BuiltContext } from '@chronicle/context';
import { ModelError, type ModelClient } from '@chronicle/llm';
import { ProseStreamFilter } from '@chronicle/narrative';
import type { TurnStreamPublisher } from '@chronicle/turn-stream';

// A turn's model call, relayed to its stream as it arrives: the narrate use case's middle step,
// apart so the use case reads as load → prompt → reply → record.

type AdventureSettings = AdventureState['settings'];

/** What the reply stream writes to and reads from. */
export interface ReplyStreamPorts {
  model: ModelClient;
  stream: TurnStreamPublisher;
  logger: Pick<Logger, 'warn'>;
}

/**
 * Whether another attempt has claimed the turn's stream since this one did (this one lost its
 * job's lock: a blocked event loop, SIGSTOP). A fenced-out attempt writes nothing more to the
 * stream, but it keeps narrating: its Narrated may still be the one that wins the log (only one
 * can), and on a loaded machine the attempt that took over may lose its lock too.
 */
export class Fence {
  private out = false;
  private batches = 0;

  get isOut(): boolean {
    return this.out;
  }

  lost(): void {
    this.out = true;
  }

  /**
   * The number of this attempt's next fenced write, 1 first (its claim restarts the count):
   * taken as the write is sent, so the numbers follow the connection's order, and a write the
   * client sends again after a dropped connection is not written twice (publishFenced).
   */
  nextBatch(): number {
    return ++this.batches;
  }
}

export type ModelDone = { usage: Usage; finishReason: string; model: string };

/** What the model sent for a turn, once its stream has ended and been relayed. */
export interface StreamedReply {
  /** The whole reply, state block included. */
  reply: string;
  reasoning: string;
  done: ModelDone;
  latencyMs: number;
}

/**
 * Calls the model and streams its prose to the turn's stream as it arrives (fenced: an attempt
 * another one has taken over from stops writing), and answers with the whole reply once the
 * model has finished and every write has been acknowledged.
 */
export async function streamReply(
  { model, stream, logger }: ReplyStreamPorts,
  settings: AdventureSettings,
  built: BuiltContext,
  turn: { adventureId: string; turnId: string; token: string },
  signal: AbortSignal,
  fence: Fence,
): Promise<StreamedReply> {
  const { adventureId, turnId, token } = turn;
  const started = Date.now();
  const prose = new ProseStreamFilter();
  const publishing: Promise<unknown>[] = [];
  let batch: { event: 'chunk' | 'reasoning'; data: { text: string } }[] | null = null;
  const publish = (event: 'chunk' | 'reasoning', text: string) => {
    // Not awaited one by one: the connection keeps the order, and the model stream is read
    // without waiting for Redis. What arrives within one tick of the event loop (a fast model
    // sends many deltas per network read) goes in one round trip; awaited together before the
    // outcome is recorded.
    if (!text) return;
    if (batch) {
      batch.push({ event, data: { text } });
      return;
    }
    const entries = (batch = [{ event, data: { text } }]);
    const written = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      batch = null;
      if (fence.isOut) return;
      if (!(await stream.publishFenced(turnId, token, entries, fence.nextBatch()))) {
        fence.lost();
        logger.warn({ msg: 'another attempt claimed the turn; this one streams no more' });
      }
    });
    // Awaited below; a model stream that throws first must not leave it unhandled.
    written.catch(() => undefined);
    publishing.push(written);
  };
  let reply = '';
  let reasoning = '';
  let done: ModelDone | null = null;
  for await (const event of model.streamNarration(
    {
      system: built.system,
      story: built.story,
      mode: settings.apiMode,
      model: built.report.settings.model,
      temperature: settings.temperature,
      maxOutputTokens: settings.maxOutputTokens,
      reasoningMaxTokens: settings.reasoningMaxTokens,
      // One adventure, one prompt cache: its turns share their prefix with each other only.
      cacheKey: adventureId,
      cacheBreakpoint: built.report.cache.breakpoint,
      storyRoles: built.storyRoles,
    },
    signal,
  )) {
    if (event.type === 'text') {
      reply += event.text;
      publish('chunk', prose.push(event.text));
    } else if (event.type === 'reasoning') {
      reasoning += event.text;
      publish('reasoning', event.text);
    } else {
      done = event;
    }
  }
  publish('chunk', prose.flush());
  await Promise.all(publishing);
  const latencyMs = Date.now() - started;
  if (!done)
    throw new ModelError({
      kind: 'cut',
      retryable: true,
      message: 'The model stream ended without finishing.',
    });
  if (signal.aborted) throw signal.reason;
  return { reply, reasoning, done, latencyMs };
}
