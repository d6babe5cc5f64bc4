// Signed webhooks (issue 32): an owner registers a URL for their adventures (all, or one) and
// the event types to be told of. A registration belongs to its owner, not to one adventure, so
// it is an accounts-like row (url, events, sealed secret), not an adventure's event. jobsAfter
// writes a notify job beside each turn event a webhook may be told of (`webhookEventOf`), in
// the append's statement; the memory worker's webhooks queue fans it out into one delivery job
// per webhook (id = the delivery id), each signed by the Standard Webhooks scheme, retried with
// exponential backoff and recorded attempt by attempt. A slow or dead receiver holds only its
// own delivery job, never a turn.
export {
  checkWebhookTarget,
  isPrivateAddress,
  WebhookTargetError,
  type Lookup,
  type ResolvedAddress,
  type WebhookTarget,
  type WebhookTargetOptions,
} from './webhook-target';
export {
  newWebhookSecret,
  signedRequest,
  type SignedRequest,
  type WebhookMessage,
} from './webhook-signing';
export * from './webhook-events';
export * from './webhook-secret.box';
export * from './webhook-sender';
export * from './webhooks.repository';
export * from './webhook-deliveries';
export * from './webhooks.module';
