// Signed webhooks (issue 32), the parts a delivery needs: the target check (no SSRF) and the
// Standard Webhooks signature. Registrations and the delivery queue are not built yet; the plan:
// a registration belongs to its owner, not to one adventure (it covers all of them, and rooms
// later), so it is an accounts-like repository row (url, events, secret), not an adventure's
// event; deliveries are BullMQ jobs (one per registration and event, id = the delivery id)
// retried with backoff, each attempt recorded in a delivery table, enqueued after the turn's
// event is committed so a slow or dead receiver never touches the turn.
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
