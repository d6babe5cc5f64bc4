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
} from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CreateScriptDto, EditScriptDto, ReorderScriptsDto, ScriptTestDto } from './script.dto';
import { ScriptsUseCase } from './scripts.use-case';

/** Scenario scripts (docs/scripting.md §0; the route names are part of the contract). */
@ApiTags('scripts')
@Controller('v1/adventures/:id/scripts')
export class ScriptsController {
  constructor(private readonly scripts: ScriptsUseCase) {}

  @Post()
  @ApiOperation({ summary: "Add a script (AI Dungeon's Library/Input/Context/Output tabs)" })
  @ApiResponse({
    status: 201,
    description: '{id, name, position, enabled, library, input, context, output, version}',
  })
  @ApiResponse({
    status: 422,
    description: 'A source over its size limit, or a syntax error with its line and column',
  })
  add(@Param('id') id: string, @Body() body: CreateScriptDto) {
    return this.scripts.add(id, body);
  }

  @Get()
  @ApiOperation({ summary: 'The scripts in run order, with sources, position and enabled' })
  list(@Param('id') id: string) {
    return this.scripts.list(id);
  }

  @Put('order')
  @ApiOperation({ summary: 'The run order: every script id once' })
  reorder(@Param('id') id: string, @Body() body: ReorderScriptsDto) {
    return this.scripts.reorder(id, body.ids);
  }

  @Get('logs')
  @ApiOperation({ summary: 'Recent hook runs, newest first: outcome, time, logs, error' })
  logs(@Param('id') id: string) {
    return this.scripts.logs(id);
  }

  @Post('test')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: "AI Dungeon's Script Test: one hook on the current projection; nothing is appended",
  })
  test(@Param('id') id: string, @Body() body: ScriptTestDto) {
    return this.scripts.test(id, body);
  }

  @Patch(':scriptId')
  @ApiOperation({ summary: 'Edit any field: a new version of the script' })
  edit(@Param('id') id: string, @Param('scriptId') scriptId: string, @Body() body: EditScriptDto) {
    return this.scripts.edit(id, scriptId, body);
  }

  @Delete(':scriptId')
  @ApiOperation({ summary: 'Remove a script (it stays in the log)' })
  remove(@Param('id') id: string, @Param('scriptId') scriptId: string) {
    return this.scripts.remove(id, scriptId);
  }

  @Get(':scriptId/state')
  @ApiOperation({ summary: "That script's state at the head" })
  state(@Param('id') id: string, @Param('scriptId') scriptId: string) {
    return this.scripts.stateOf(id, scriptId);
  }
}
