import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InvalidCommandError } from '@chronicle/adventure';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { LoreFileError, exportLore, readLoreFile, type ParsedBook } from '@chronicle/lore';
import { requestMetadata } from '../http/request-actor';
import type { LoreExportQuery, LoreImportQuery } from './lore.dto';

/** Lore files in and out of an adventure's story cards (libs/lore reads and writes them). */
@Injectable()
export class StoryCardLoreUseCase {
  constructor(private readonly adventures: AdventureCommandHandler) {}

  /** One file, one StoryCardsImported event, or a 4xx naming the problem and nothing written. */
  async import(adventureId: string, body: unknown, query: LoreImportQuery) {
    if (!Buffer.isBuffer(body) || body.length === 0) {
      throw new InvalidCommandError(
        'send the lore file itself as the request body (JSON, .lorebook, PNG or .charx)',
      );
    }
    let book: ParsedBook;
    try {
      book = readLoreFile(body, query.format);
    } catch (error) {
      if (error instanceof LoreFileError) throw new InvalidCommandError(error.message);
      throw error;
    }
    const bookId = randomUUID();
    const { state } = await this.adventures.handle(
      adventureId,
      {
        type: 'ImportStoryCards',
        data: {
          book: {
            id: bookId,
            format: book.format,
            formatVersion: book.formatVersion,
            name: book.name,
            raw: book.raw,
          },
          mode: query.mode ?? 'merge',
          cards: book.cards.map((card) => ({
            ...card,
            id: randomUUID(),
            origin: { ...card.origin, bookId },
          })),
          skipped: book.report.skipped.length,
        },
      },
      requestMetadata(),
    );
    return {
      format: book.format,
      formatVersion: book.formatVersion,
      bookId,
      imported: book.cards.length,
      skipped: book.report.skipped.length,
      report: book.report,
      version: state.version,
    };
  }

  async export(adventureId: string, query: LoreExportQuery) {
    const state = await this.adventures.get(adventureId);
    return exportLore(query.format, state.cards, state.lorebooks);
  }
}
