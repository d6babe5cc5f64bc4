export {
  createChronicleClient,
  type ChronicleApi,
  type ChronicleClient,
  type ChronicleClientOptions,
  type FollowTurnOptions,
} from './chronicle.client';
export {
  followStream,
  SseParser,
  type FollowOptions,
  type ReceivedFrame,
  type SseFrame,
} from './turn-follower';
export type { components, operations, paths } from './openapi.generated';
/** A named schema of the API's document: `Schema<'AdventureView'>`. */
export type Schema<Name extends keyof import('./openapi.generated').components['schemas']> =
  import('./openapi.generated').components['schemas'][Name];
