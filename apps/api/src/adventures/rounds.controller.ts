import { Controller, Delete, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentUser, type RequestUser } from '../auth/request-user';
import { StartsTurn } from '../auth/starts-turn.decorator';
import { RoundChangedView } from './adventure.views';
import { RoundsUseCase } from './rounds.use-case';

/** A room's open round under the `round` policy (spec/multiplayer.md §3.8). */
@ApiTags('turns')
@Controller('v1/adventures/:id/rounds/current')
export class RoundsController {
  constructor(private readonly rounds: RoundsUseCase) {}

  // A pass may close the round, which starts its turn (a model call).
  @Post('pass')
  @StartsTurn()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Pass this round (a player); the last one in closes it' })
  @ApiOkResponse({ type: RoundChangedView })
  @ApiResponse({ status: 409, description: "The adventure's turn policy is not round" })
  pass(@Param('id') id: string, @CurrentUser() user: RequestUser) {
    return this.rounds.pass(id, user.id);
  }

  @Delete('submission')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Withdraw your submission before the round closes' })
  @ApiOkResponse({ type: RoundChangedView })
  @ApiResponse({ status: 404, description: 'You have no submission in the open round' })
  withdraw(@Param('id') id: string, @CurrentUser() user: RequestUser) {
    return this.rounds.withdraw(id, user.id);
  }

  @Post('close')
  @StartsTurn()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Close the round now (the host): its submissions are narrated together',
    description:
      'While a turn is narrated the round closes when that turn ends (`turnId` is then null).',
  })
  @ApiOkResponse({ type: RoundChangedView })
  @ApiResponse({ status: 409, description: 'Not the host, or the round has nothing in it' })
  close(@Param('id') id: string, @CurrentUser() user: RequestUser) {
    return this.rounds.close(id, user.id);
  }
}
