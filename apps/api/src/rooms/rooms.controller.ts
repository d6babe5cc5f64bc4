import {
  Body,
  Controller,
  Delete,
  Get,
  HttpStatus,
  Param,
  Patch,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { requestUserId } from '../auth/request-user';
import {
  ChangeMemberDto,
  CreateInviteDto,
  InvitesView,
  InviteView,
  JoinRoomDto,
  MemberView,
  MembershipView,
  MembersView,
} from './room.dto';
import { RoomsUseCase } from './rooms.use-case';

// Rooms (spec/multiplayer.md §3.8): invites, joining, members. Who may call which route is the
// access guard's (by role, fail closed); the rules of the room are the room decider's.

@ApiTags('rooms')
@Controller()
export class RoomsController {
  constructor(private readonly rooms: RoomsUseCase) {}

  @Post('v1/adventures/:id/invites')
  @ApiOperation({
    summary: 'The host invites: a code anyone with it may join with, as player or spectator',
  })
  @ApiResponse({ status: 201, type: InviteView })
  createInvite(@Param('id') id: string, @Body() body: CreateInviteDto) {
    return this.rooms.createInvite(id, body);
  }

  @Get('v1/adventures/:id/invites')
  @ApiOperation({
    summary: "The host's invites, live and spent (spent ones are cleared by the next invite)",
  })
  @ApiOkResponse({ type: InvitesView })
  invites(@Param('id') id: string) {
    return this.rooms.invites(id);
  }

  @Delete('v1/adventures/:id/invites/:code')
  @ApiOperation({ summary: 'The host revokes an invite: nobody joins with it any more' })
  revokeInvite(@Param('id') id: string, @Param('code') code: string) {
    return this.rooms.revokeInvite(id, code);
  }

  @Post('v1/invites/:code/join')
  @ApiOperation({
    summary:
      'Join a room with your own key and a character; a member already answers their membership (200)',
  })
  @ApiResponse({ status: 201, type: MembershipView, description: 'Joined' })
  @ApiResponse({ status: 200, type: MembershipView, description: 'Already a member' })
  @ApiResponse({ status: 403, description: 'Banned from this room by its host' })
  @ApiResponse({ status: 404, description: 'No such invite (or revoked)' })
  @ApiResponse({ status: 410, description: 'The invite expired or was used up' })
  async join(
    @Param('code') code: string,
    @Body() body: JoinRoomDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { created, membership } = await this.rooms.join(code, requestUserId(), body);
    res.status(created ? HttpStatus.CREATED : HttpStatus.OK);
    return membership;
  }

  @Get('v1/adventures/:id/members')
  @ApiOperation({ summary: "The room's members, the host first, in join order" })
  @ApiOkResponse({ type: MembersView })
  members(@Param('id') id: string) {
    return this.rooms.members(id);
  }

  @Patch('v1/adventures/:id/members/:userId')
  @ApiOperation({
    summary:
      'The host: a member\'s role ("host" hands the room over); a member for themselves: their character',
  })
  @ApiOkResponse({ type: MemberView })
  changeMember(
    @Param('id') id: string,
    @Param('userId') userId: string,
    @Body() body: ChangeMemberDto,
  ) {
    return this.rooms.changeMember(id, requestUserId(), userId, body);
  }

  @Delete('v1/adventures/:id/members/:userId')
  @ApiOperation({
    summary: 'The host: kick a member (?ban=true bans them); a member for themselves: leave',
  })
  removeMember(
    @Param('id') id: string,
    @Param('userId') userId: string,
    @Query('ban') ban?: string,
  ) {
    return this.rooms.removeMember(id, requestUserId(), userId, ban === 'true');
  }
}
