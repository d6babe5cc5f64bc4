import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@chronicle/platform';
import { APP_CONFIG } from '../app-config.token';
import { projectionView, storyPath } from '@chronicle/adventure';
import {
  AdventureReplayer,
  AdventureCommandHandler,
  importAdventure,
  openAdventureExport,
  type ImportedAdventure,
  type ReplayReport,
} from '@chronicle/adventure-store';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { currentOwnerId, requestMetadata } from '../http/request-actor';
import { assertModelAllowed } from '../adventures/model-policy';
import { turnIdFor } from '../adventures/turn-id';

/** Story actions (with texts) in a time-travel answer: the newest ones at that version. */
const AT_VERSION_ACTIONS = 20;

// Replay, time travel and moving adventures between installations: thin over the
// adventure-store functions, which hold the logic (and the CLI shares it).
@Injectable()
export class ReplayUseCase {
  private readonly replayer: AdventureReplayer;

  constructor(
    private readonly eventStore: EventStoreRepository,
    private readonly adventures: AdventureCommandHandler,
    snapshots: SnapshotRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.replayer = new AdventureReplayer(eventStore, snapshots);
  }

  replay(adventureId: string): Promise<ReplayReport> {
    return this.replayer.replay(adventureId);
  }

  /**
   * The projection right after `version`, with what an audit wants first: the narrative state
   * and the context manifest of the turn that produced it (the newest narration at or below
   * that version), and the newest story actions with their texts.
   */
  async at(adventureId: string, version: number) {
    const state = await this.adventures.loadAt(adventureId, version);
    const entries = storyPath(state).slice(-AT_VERSION_ACTIONS);
    const texts = await this.adventures.readActionTexts(adventureId, entries);
    return {
      id: state.id,
      version: state.version,
      head: state.head,
      narrativeState: state.narrative,
      context: state.lastContext,
      actions: entries.map((entry, i) => ({
        id: entry.id,
        type: entry.type,
        text: texts[i],
        turnId: entry.turnId,
      })),
      projection: projectionView(state),
    };
  }

  exportLog(adventureId: string) {
    return openAdventureExport(this.eventStore, adventureId, new Date());
  }

  importLog(text: string): Promise<ImportedAdventure> {
    const adventureId = randomUUID();
    return importAdventure(this.adventures, text, {
      adventureId,
      ownerId: currentOwnerId(),
      actor: requestMetadata().actor,
      turnIdOf: (turnId) => turnIdFor(adventureId, turnId),
      checkModel: (model) => assertModelAllowed(model, this.config),
    });
  }
}
