// One delivery attempt: the target is checked again now (the name may point elsewhere since it
// was registered: DNS rebinding), and the connection goes to the address that check approved,
// not to whatever a second lookup would answer. The Host header and TLS name stay the URL's.
// Every wait is bounded: a receiver that accepts and never answers costs one timeout.
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  checkWebhookTarget,
  type ResolvedAddress,
  type WebhookTargetOptions,
} from './webhook-target';
import type { SignedRequest } from './webhook-signing';

export interface SendOptions extends WebhookTargetOptions {
  timeoutMs: number;
}

/** What the receiver answered: any status (2xx is a delivery), or no answer at all. */
export type SendResult =
  | { answered: true; status: number; durationMs: number }
  | { answered: false; error: string; durationMs: number };

/** The most of a receiver's answer read (and thrown away): its status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** POSTs a signed request; throws WebhookTargetError when the target is refused. */
export async function sendSigned(
  url: string,
  signed: SignedRequest,
  options: SendOptions,
): Promise<SendResult> {
  const target = await checkWebhookTarget(url, options);
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  const parsed = new URL(target.url);
  const pinned = pinnedLookup(target.addresses[0]);
  const send = parsed.protocol === 'https:' ? httpsRequest : httpRequest;
  const requestOptions: RequestOptions = {
    method: 'POST',
    headers: { ...signed.headers, 'content-length': Buffer.byteLength(signed.body) },
    lookup: pinned,
    timeout: options.timeoutMs,
    // no connection reuse: each attempt resolves, checks and connects afresh
    agent: false,
  };
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(result);
    };
    const req = send(parsed, requestOptions, (res) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) res.destroy();
      });
      res.on('close', () =>
        finish({ answered: true, status: res.statusCode ?? 0, durationMs: durationMs() }),
      );
      res.on('error', () => undefined);
    });
    // The socket's idle timeout does not bound a receiver that trickles bytes: this does.
    const deadline = setTimeout(() => {
      req.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (error) =>
      finish({ answered: false, error: error.message, durationMs: durationMs() }),
    );
    req.end(signed.body);
  });
}

/** A lookup that answers the checked address, whatever the name resolves to by now. */
function pinnedLookup(address: ResolvedAddress): LookupFunction {
  return ((
    _hostname: string,
    options: { all?: boolean },
    callback: (...args: unknown[]) => void,
  ) => {
    if (options?.all) callback(null, [{ address: address.address, family: address.family }]);
    else callback(null, address.address, address.family);
  }) as LookupFunction;
}
