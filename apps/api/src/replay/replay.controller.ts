import {
  BadRequestException,
  Body,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import { ApiBody, ApiOperation, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { LIMITS } from '@chronicle/adventure';
import type { Request, Response } from 'express';
import { ReplayUseCase } from './replay.use-case';
import { StreamVersionPipe } from '../http/path-params.pipe';
import { SlowStatements } from '../http/slow-statements';

export class ReplayRequestDto {
  @ApiProperty({ description: 'The adventure to rebuild from its first event.' })
  @IsString()
  @MinLength(1)
  @MaxLength(LIMITS.idChars)
  adventureId!: string;
}

const versionPipe = new StreamVersionPipe();

// Closed to every key but ADMIN_API_KEY (the access guard checks every /v1/admin route):
// replaying any adventure reads every player's story.
@ApiTags('admin')
@Controller('v1/admin')
export class ReplayAdminController {
  constructor(private readonly replays: ReplayUseCase) {}

  @Post('replay')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      'Rebuild one adventure from its first event and compare with its snapshot and stored projection',
  })
  @ApiResponse({ status: 200, description: 'The report: equal, or the first diverging event' })
  replay(@Body() body: ReplayRequestDto) {
    return this.replays.replay(body.adventureId);
  }
}

@ApiTags('adventures')
@Controller('v1/adventures')
export class AdventureHistoryController {
  constructor(private readonly replays: ReplayUseCase) {}

  @Get(':id/at/:version')
  @ApiOperation({
    summary:
      'The projection as it was right after that version, with its narrative state and the context manifest of the turn that produced it',
  })
  at(@Param('id') id: string, @Param('version', versionPipe) version: number) {
    if (version < 1) throw new BadRequestException('version must be 1 or more');
    return this.replays.at(id, version);
  }

  @Get(':id/export')
  @SlowStatements()
  @ApiOperation({ summary: 'The event log as NDJSON: a header line, then one event per line' })
  async export(@Param('id') id: string, @Res() res: Response): Promise<void> {
    // Opened before the first byte, so a missing adventure is still a plain 404.
    const { lines } = await this.replays.exportLog(id);
    res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="adventure-${id}.ndjson"`);
    for await (const chunk of lines) {
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
  }

  @Post('import')
  @SlowStatements()
  @ApiOperation({
    summary:
      'Create a new adventure from an export (NDJSON). The whole file is checked first: a bad line is a 400 naming it, and nothing is written.',
  })
  @ApiBody({
    description: 'The NDJSON of GET /v1/adventures/:id/export (Content-Type application/x-ndjson)',
  })
  @ApiResponse({ status: 201, description: '{adventureId, version, sourceAdventureId, events}' })
  import(@Req() req: Request) {
    if (typeof req.body !== 'string' || req.body.length === 0) {
      throw new BadRequestException(
        'send the export as the body with Content-Type application/x-ndjson',
      );
    }
    return this.replays.importLog(req.body);
  }
}
