import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import {
  ADMIN_USAGE_GROUPS,
  ROOM_USAGE_GROUPS,
  USER_USAGE_GROUPS,
  parseUsageQuery,
} from '@chronicle/accounts';
import { CurrentUser, type RequestUser } from '../auth/request-user';
import { UsageLedger } from './usage-ledger.service';
import { SlowStatements } from '../http/slow-statements';

const FROM = {
  name: 'from',
  required: false,
  description:
    'Start (inclusive): 2026-12-01 (midnight UTC) or 2026-12-01T08:00:00Z. Default: 30 days before `to`.',
};
const TO = {
  name: 'to',
  required: false,
  description: 'End (exclusive), in the same form. Default: now. At most 366 days after `from`.',
};

// The cost ledger: what the caller's model calls (narration, memories, summaries, embeddings)
// cost, from the usage every call's event records and the price table in force.

@ApiTags('usage')
@ApiBearerAuth()
@Controller('v1')
export class UsageController {
  constructor(private readonly ledger: UsageLedger) {}

  @Get('usage')
  @ApiOperation({ summary: "The caller's model calls: tokens, cached share and cost (USD)" })
  @ApiQuery(FROM)
  @ApiQuery(TO)
  @ApiQuery({
    name: 'groupBy',
    required: false,
    enum: USER_USAGE_GROUPS,
    description: 'Default: day.',
  })
  usage(@CurrentUser() user: RequestUser, @Query() params: Record<string, unknown>) {
    return this.ledger.report(parseUsageQuery(params, user.id, new Date(), USER_USAGE_GROUPS));
  }

  @Get('adventures/:id/usage')
  @ApiOperation({
    summary:
      "One adventure's (a room's) model calls by member, day or model: a call that answered several members' actions is split evenly among them; one that answered none (a memory pass) is the host's",
  })
  @ApiQuery(FROM)
  @ApiQuery(TO)
  @ApiQuery({
    name: 'groupBy',
    required: false,
    enum: ROOM_USAGE_GROUPS,
    description: 'Default: member.',
  })
  roomUsage(@Param('id') id: string, @Query() params: Record<string, unknown>) {
    const query = parseUsageQuery(
      { groupBy: 'member', ...params },
      null,
      new Date(),
      ROOM_USAGE_GROUPS,
    );
    return this.ledger.report({ ...query, adventureId: id });
  }

  @Get('admin/usage')
  @SlowStatements()
  @ApiOperation({ summary: "Every user's model calls, for the operator (ADMIN_API_KEY)" })
  @ApiQuery(FROM)
  @ApiQuery(TO)
  @ApiQuery({
    name: 'groupBy',
    required: false,
    enum: ADMIN_USAGE_GROUPS,
    description: 'Default: day.',
  })
  adminUsage(@Query() params: Record<string, unknown>) {
    return this.ledger.report(parseUsageQuery(params, null, new Date(), ADMIN_USAGE_GROUPS));
  }
}
