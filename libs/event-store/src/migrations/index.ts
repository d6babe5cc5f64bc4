// Migrations are listed here, not found by scanning a folder: the apps may be
// bundled into one file, where no migrations folder exists at run time.
// Append new migrations at the end; never edit one that has landed.
import type { Migration } from 'kysely';
import * as createEvents from './20251129180000-create-events';
import * as createOutbox from './20251129180100-create-outbox';
import * as createSnapshots from './20251129180200-create-snapshots';
import * as createAppendToStreamFunction from './20251129180300-create-append-to-stream-function';
import * as replaceAppendToStreamFunction from './20251129190000-replace-append-to-stream-function';
import * as createMemoryEmbeddings from './20251129200000-create-memory-embeddings';
import * as createAccounts from './20251129210000-create-accounts';
import * as snapshotsByVersionAsText from './20251130120000-snapshots-by-version-as-text';
import * as snapshotsCompressed from './20251130150000-snapshots-compressed';
import * as appendToStreamOneStatement from './20251201090000-append-to-stream-one-statement';
import * as createTurnsInFlight from './20261201110000-create-turns-in-flight';
import * as eventsKeyedByStream from './20261201140000-events-keyed-by-stream';
import * as readModelsWithTheEvents from './20261205210000-read-models-with-the-events';
import * as createStoryPassages from './20261205220000-create-story-passages';
import * as createWebhooks from './20261206030000-create-webhooks';
import * as modelCallsByMember from './20261206040000-model-calls-by-member';
import * as roomMembersAndInvites from './20261206050000-room-members-and-invites';

export const migrations: Record<string, Migration> = {
  '20251129180000-create-events': createEvents,
  '20251129180100-create-outbox': createOutbox,
  '20251129180200-create-snapshots': createSnapshots,
  '20251129180300-create-append-to-stream-function': createAppendToStreamFunction,
  '20251129190000-replace-append-to-stream-function': replaceAppendToStreamFunction,
  '20251129200000-create-memory-embeddings': createMemoryEmbeddings,
  '20251129210000-create-accounts': createAccounts,
  '20251130120000-snapshots-by-version-as-text': snapshotsByVersionAsText,
  '20251130150000-snapshots-compressed': snapshotsCompressed,
  '20251201090000-append-to-stream-one-statement': appendToStreamOneStatement,
  '20261201110000-create-turns-in-flight': createTurnsInFlight,
  '20261201140000-events-keyed-by-stream': eventsKeyedByStream,
  '20261205210000-read-models-with-the-events': readModelsWithTheEvents,
  '20261205220000-create-story-passages': createStoryPassages,
  '20261206030000-create-webhooks': createWebhooks,
  '20261206040000-model-calls-by-member': modelCallsByMember,
  '20261206050000-room-members-and-invites': roomMembersAndInvites,
};
