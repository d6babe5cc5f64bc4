// The turn stream's follower (SSE with Last-Event-ID resume) lives in the typed client package,
// which bots import too; the web client takes it from there.
export {
  followStream,
  SseParser,
  type FollowOptions,
  type ReceivedFrame,
  type SseFrame,
} from '../../../libs/client/src/turn-follower';
