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
} from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AddMemoryDto, EditMemoryDto, EditSummaryDto, MemorySourcesView } from './memory.dto';
import { MemoriesUseCase } from './memories.use-case';

@ApiTags('memories')
@Controller('v1/adventures/:id')
export class MemoriesController {
  constructor(private readonly memories: MemoriesUseCase) {}

  @Get('memories')
  @ApiOperation({
    summary: 'The memories on the current path, with pinned and forgotten flags and use counts',
  })
  list(@Param('id') id: string) {
    return this.memories.list(id);
  }

  @Post('memories')
  @ApiOperation({ summary: 'Add a memory of your own, anchored at the head' })
  @ApiResponse({ status: 422, description: 'The adventure already holds the most memories' })
  add(@Param('id') id: string, @Body() body: AddMemoryDto) {
    return this.memories.add(id, body.text, body.id);
  }

  @Get('memories/:memoryId/sources')
  @ApiOperation({
    summary: "Expand a memory to the story's own text of the actions it was written from",
  })
  @ApiOkResponse({ type: MemorySourcesView })
  @ApiResponse({
    status: 404,
    description: 'No such memory, or it is not valid on the current path (undone, edited away)',
  })
  sources(@Param('id') id: string, @Param('memoryId') memoryId: string) {
    return this.memories.sources(id, memoryId);
  }

  @Patch('memories/:memoryId')
  @ApiOperation({ summary: "Rewrite a memory's text" })
  edit(@Param('id') id: string, @Param('memoryId') memoryId: string, @Body() body: EditMemoryDto) {
    return this.memories.edit(id, memoryId, body.text);
  }

  @Post('memories/:memoryId/pin')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Always use this memory (it counts toward top-K)' })
  pin(@Param('id') id: string, @Param('memoryId') memoryId: string) {
    return this.memories.pin(id, memoryId, true);
  }

  @Post('memories/:memoryId/unpin')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Let retrieval decide again' })
  unpin(@Param('id') id: string, @Param('memoryId') memoryId: string) {
    return this.memories.pin(id, memoryId, false);
  }

  @Post('memories/:memoryId/forget')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Keep the memory but never retrieve it (pin it to bring it back)' })
  forget(@Param('id') id: string, @Param('memoryId') memoryId: string) {
    return this.memories.forget(id, memoryId);
  }

  @Delete('memories/:memoryId')
  @ApiOperation({ summary: 'Delete a memory (kept in the log)' })
  remove(@Param('id') id: string, @Param('memoryId') memoryId: string) {
    return this.memories.remove(id, memoryId);
  }

  @Get('summary')
  @ApiOperation({ summary: 'The story summary on the current path (null before the first)' })
  summary(@Param('id') id: string) {
    return this.memories.summary(id);
  }

  @Patch('summary')
  @ApiOperation({ summary: 'Write the summary yourself; the summarizer starts from your text' })
  editSummary(@Param('id') id: string, @Body() body: EditSummaryDto) {
    return this.memories.editSummary(id, body.text);
  }

  @Post('summary/regenerate')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Write the summary again from the memories and the story, now' })
  @ApiResponse({ status: 502, description: 'The summarizer failed; the summary is unchanged' })
  @ApiResponse({ status: 429, description: 'The turn limit or the daily model budget is spent' })
  @CallsModel()
  regenerate(@Param('id') id: string) {
    return this.memories.regenerateSummary(id);
  }
}
