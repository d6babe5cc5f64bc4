import { CallsModel } from '../auth/starts-turn.decorator';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import {
  AdventureCreatedView,
  AdventureListView,
  AdventureView,
  EventsPageView,
  StoryActionView,
} from './adventure.views';
import type { Request, Response } from 'express';
import {
  CorrectNarrativeStateDto,
  CreateAdventureDto,
  EditActionDto,
  EditAdventureDto,
  EditStoryCardDto,
  MoveHeadDto,
  PlayerInputDto,
  RetconDto,
  StoryCardDto,
} from './adventure.dto';
import { AdventureCommandsUseCase } from './adventure-commands.use-case';
import { AdventureReader } from './adventure.reader';
import { SlowStatements } from '../http/slow-statements';
import { OptionalBody } from '../http/request-body';
import { ContextPreviewUseCase } from './context-preview.use-case';
import { CreateAdventureUseCase } from './create-adventure.use-case';
import { LoreExportQuery, LoreImportQuery } from './lore.dto';
import { StoryCardLoreUseCase } from './story-card-lore.use-case';
import { ActionsPageQuery, AdventuresPageQuery, EventsPageQuery } from './paging.dto';

@ApiTags('adventures')
@Controller('v1/adventures')
export class AdventuresController {
  constructor(
    private readonly creator: CreateAdventureUseCase,
    private readonly commands: AdventureCommandsUseCase,
    private readonly reader: AdventureReader,
    private readonly contextPreview: ContextPreviewUseCase,
    private readonly lore: StoryCardLoreUseCase,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create an adventure from a scenario; `${Name}` placeholders answered' })
  @ApiCreatedResponse({ type: AdventureCreatedView })
  @ApiResponse({ status: 400, description: 'A field to fix, or placeholders without answers' })
  create(@Body() body: CreateAdventureDto) {
    return this.creator.create(body);
  }

  @Get()
  @ApiOperation({ summary: 'The adventures (id, title, version), paged by `after`' })
  @ApiOkResponse({ type: AdventureListView })
  list(@Query() page: AdventuresPageQuery) {
    return this.reader.list(page);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'The projection at the head, with the newest page of the story (`before`, `limit`)',
    description:
      '`lastNarration` is the newest narration on the story: its `accepted`, `rejected` (with reasons) and `retconned` state events, and `takes`, the ids of every take of that turn (one per retry, oldest first) — select one with `PUT …/head`.',
  })
  @ApiOkResponse({ type: AdventureView })
  get(@Param('id') id: string, @Query() page: ActionsPageQuery) {
    return this.reader.view(id, page);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Edit the title, texts, persona, canon or settings' })
  edit(@Param('id') id: string, @Body() body: EditAdventureDto) {
    return this.commands.edit(id, body);
  }

  @Post(':id/undo')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Move the head back one turn (non-destructive)' })
  undo(@Param('id') id: string) {
    return this.commands.undo(id);
  }

  @Post(':id/redo')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Restore what undo hid, until a new action is written' })
  redo(@Param('id') id: string) {
    return this.commands.redo(id);
  }

  @Put(':id/head')
  @ApiOperation({ summary: 'Stand on an action: select a take or switch branch' })
  moveHead(@Param('id') id: string, @Body() body: MoveHeadDto) {
    return this.commands.moveHead(id, body.actionId);
  }

  @Get(':id/actions/:actionId')
  @ApiOkResponse({ type: StoryActionView })
  @ApiOperation({
    summary:
      'One action of the story at the head: `{id, type, text, turnId, position, version}` (`position` 0 is the opening); 404 when it is not on the current path',
  })
  getAction(@Param('id') id: string, @Param('actionId') actionId: string) {
    return this.reader.action(id, actionId);
  }

  @Patch(':id/actions/:actionId')
  @ApiOperation({ summary: "Edit an action's text" })
  editAction(
    @Param('id') id: string,
    @Param('actionId') actionId: string,
    @Body() body: EditActionDto,
  ) {
    return this.commands.editAction(id, actionId, body.text);
  }

  @Delete(':id/actions/:actionId')
  @ApiOperation({ summary: 'Erase an action from the story (kept in the log)' })
  eraseAction(@Param('id') id: string, @Param('actionId') actionId: string) {
    return this.commands.eraseAction(id, actionId);
  }

  @Post(':id/story-cards')
  @ApiOperation({ summary: 'Add a story card' })
  addCard(@Param('id') id: string, @Body() body: StoryCardDto) {
    return this.commands.addCard(id, body);
  }

  @Post(':id/story-cards/import')
  @SlowStatements()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      'Import a lore file (AI Dungeon, SillyTavern, Character Card V2/V3 JSON/PNG/.charx, NovelAI, KoboldAI Lite) as story cards',
  })
  @ApiConsumes('application/octet-stream', 'application/json', 'image/png', 'application/zip')
  @ApiBody({
    description:
      'The file itself, with any Content-Type but multipart (415); the format is read from the bytes.',
    schema: { type: 'string', format: 'binary' },
  })
  @ApiResponse({ status: 415, description: 'A multipart form: send the file itself' })
  @ApiResponse({ status: 200, description: '{format, imported, skipped, report, version}' })
  @ApiResponse({ status: 400, description: 'The file is malformed: the message says how' })
  importCards(@Param('id') id: string, @Query() query: LoreImportQuery, @Req() req: Request) {
    return this.lore.import(id, req.body, query);
  }

  @Get(':id/story-cards/export')
  @SlowStatements()
  @ApiOperation({
    summary:
      'The story cards as a lore file; what the format cannot hold is listed in the Chronicle-Lore-Warnings header (JSON)',
  })
  async exportCards(
    @Param('id') id: string,
    @Query() query: LoreExportQuery,
    @Res({ passthrough: true }) res: Response,
  ) {
    const exported = await this.lore.export(id, query);
    // JSON in a header, kept to ASCII (a header value cannot carry more).
    const warnings = JSON.stringify(exported.warnings).replace(
      /[^\x20-\x7e]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    res.setHeader('Chronicle-Lore-Warnings', warnings);
    res.setHeader('Content-Disposition', `attachment; filename="${exported.fileName}"`);
    return exported.file;
  }

  @Patch(':id/story-cards/:cardId')
  @ApiOperation({ summary: 'Edit a story card' })
  editCard(
    @Param('id') id: string,
    @Param('cardId') cardId: string,
    @Body() body: EditStoryCardDto,
  ) {
    return this.commands.editCard(id, cardId, body);
  }

  @Delete(':id/story-cards/:cardId')
  @ApiOperation({ summary: 'Remove a story card' })
  removeCard(@Param('id') id: string, @Param('cardId') cardId: string) {
    return this.commands.removeCard(id, cardId);
  }

  @Get(':id/narrative-state')
  @ApiOperation({ summary: 'The narrative state at the head' })
  narrativeState(@Param('id') id: string) {
    return this.commands.narrativeState(id);
  }

  @Patch(':id/narrative-state')
  @ApiOperation({ summary: 'Correct the narrative state (the player is the final authority)' })
  correct(@Param('id') id: string, @Body() body: CorrectNarrativeStateDto) {
    return this.commands.correct(id, body);
  }

  @Post(':id/narrative-state/retcons')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: "Withdraw one of a narration's accepted state events" })
  retcon(@Param('id') id: string, @Body() body: RetconDto) {
    return this.commands.retcon(id, body.actionId, body.index);
  }

  @Get(':id/context')
  @ApiOperation({ summary: "The last turn's context report manifest (404 before the first turn)" })
  lastContext(@Param('id') id: string) {
    return this.reader.lastContext(id);
  }

  @Get(':id/context/prompt')
  @ApiOperation({
    summary:
      "The last turn's exact prompt (system and story), rebuilt from the log and checked against the sha256 its manifest recorded (404 before the first turn, or when no rebuild matches)",
  })
  lastPrompt(@Param('id') id: string) {
    return this.contextPreview.lastTurnPrompt(id);
  }

  @Post(':id/context/preview')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      "Dry run: the context the next turn would send — for the action in the body when one is sent (`{type, text}` as for POST …/actions), else for the story as it stands; nothing is written but the retrieval embedding's cost",
  })
  @ApiBody({ type: PlayerInputDto, required: false })
  @ApiResponse({ status: 200, description: '{version, system, story, report, manifest}' })
  @ApiResponse({
    status: 400,
    description: 'The action is one a turn would refuse, or has a field it does not take',
  })
  @ApiResponse({ status: 409, description: 'A turn is in flight (only with an action)' })
  @CallsModel()
  previewContext(
    @Param('id') id: string,
    @Body(new OptionalBody(PlayerInputDto)) action: PlayerInputDto | undefined,
  ) {
    return this.contextPreview.preview(id, action);
  }

  @Get(':id/events')
  @ApiOperation({ summary: 'The event log, paged by stream version' })
  @ApiOkResponse({ type: EventsPageView })
  events(@Param('id') id: string, @Query() page: EventsPageQuery) {
    return this.reader.eventLog(id, page);
  }
}
