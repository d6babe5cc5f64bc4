import { Injectable, type OnModuleInit } from '@nestjs/common';
import { showsOnRoomStream } from '@chronicle/adventure';
import { ControlPlane } from '@chronicle/platform';
import { AdventureCommandHandler } from './adventure.command-handler';

/**
 * Tells every API process that an adventure's log grew by something its room stream shows (a
 * member joined, a turn started or ended), so the stream's followers read the log at once rather
 * than ask it again and again. Every process that appends such events (the API, the context
 * worker) runs one. Not awaited: the append is the truth and is done; a lost signal only delays
 * followers to their quiet check of the log.
 */
@Injectable()
export class AppendAnnouncer implements OnModuleInit {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly controlPlane: ControlPlane,
  ) {}

  onModuleInit(): void {
    this.adventures.whenAppended((adventureId, events) => {
      if (!showsOnRoomStream(events)) return;
      const version = events[events.length - 1].version;
      this.controlPlane.announceAppended(adventureId, version).catch(() => undefined);
    });
  }
}
