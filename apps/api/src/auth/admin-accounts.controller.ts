import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { NotFoundError } from '@chronicle/adventure';
import { AccountsRepository } from '@chronicle/accounts';
import { CreateApiKeyDto, CreateUserDto } from './admin-accounts.dto';
import { KeyRevocations } from './key-revocations';

// Users and keys, for the holder of ADMIN_API_KEY (the access guard checks it for /v1/admin).

@ApiTags('admin')
@ApiBearerAuth()
@Controller('v1/admin/users')
export class AdminAccountsController {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly revocations: KeyRevocations,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a user' })
  createUser(@Body() body: CreateUserDto) {
    return this.accounts.createUser({
      name: body.name,
      dailyTokenBudget: body.dailyTokenBudget ?? null,
    });
  }

  @Post(':id/keys')
  @ApiOperation({ summary: 'Create an API key for a user; the key is in this answer only' })
  @ApiResponse({ status: 201, description: '{id, userId, prefix, name, createdAt, key}' })
  async createKey(@Param('id') userId: string, @Body() body: CreateApiKeyDto) {
    const created = await this.accounts.createKey(userId, body?.name ?? 'default');
    if (!created) throw new NotFoundError(`user ${userId} not found`);
    return created;
  }

  @Get(':id/keys')
  @ApiOperation({ summary: "A user's keys (prefixes and dates; never the keys)" })
  async listKeys(@Param('id') userId: string) {
    if (!(await this.accounts.getUser(userId))) throw new NotFoundError(`user ${userId} not found`);
    return { keys: await this.accounts.listKeys(userId) };
  }

  @Delete(':id/keys/:keyId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Revoke a key: it stops working at once, on every API instance' })
  async revokeKey(@Param('id') userId: string, @Param('keyId') keyId: string): Promise<void> {
    if (!(await this.revocations.revoke(userId, keyId))) {
      throw new NotFoundError(`key ${keyId} of user ${userId} not found`);
    }
  }
}
