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
  Query,
} from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { InvalidCommandError, NotFoundError } from '@chronicle/adventure';
import { AccountChanges, AccountsRepository } from '@chronicle/accounts';
import {
  CreateApiKeyDto,
  CreateUserDto,
  UpdateUserDto,
  USERS_PAGE_DEFAULT,
  UsersPageQuery,
} from './admin-accounts.dto';

// Users and keys, for the holder of ADMIN_API_KEY (the access guard checks it for /v1/admin).

@ApiTags('admin')
@ApiBearerAuth()
@Controller('v1/admin/users')
export class AdminAccountsController {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly changes: AccountChanges,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a user' })
  createUser(@Body() body: CreateUserDto) {
    return this.accounts.createUser({
      name: body.name,
      dailyTokenBudget: body.dailyTokenBudget ?? null,
    });
  }

  @Get()
  @ApiOperation({ summary: 'The users, in id order, paged by `after` (`next`: the next page)' })
  async listUsers(@Query() page: UsersPageQuery) {
    const limit = page.limit ?? USERS_PAGE_DEFAULT;
    const users = await this.accounts.listUsers(page.after, limit);
    return { users, next: users.length === limit ? (users.at(-1)?.id ?? null) : null };
  }

  @Get(':id')
  @ApiOperation({ summary: 'A user' })
  async getUser(@Param('id') userId: string) {
    const user = await this.accounts.getUser(userId);
    if (!user) throw new NotFoundError(`user ${userId} not found`);
    return user;
  }

  @Patch(':id')
  @ApiOperation({
    summary: "Change a user's name or daily token budget; every process uses it at once",
  })
  async updateUser(@Param('id') userId: string, @Body() body: UpdateUserDto) {
    if (body?.name === undefined && body?.dailyTokenBudget === undefined) {
      throw new InvalidCommandError(
        'send "name" or "dailyTokenBudget" (a number of tokens a day, 0 for none, or null for the installation\'s default)',
      );
    }
    const user = await this.changes.updateUser(userId, {
      name: body.name,
      dailyTokenBudget: body.dailyTokenBudget,
    });
    if (!user) throw new NotFoundError(`user ${userId} not found`);
    return user;
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
    if (!(await this.changes.revokeKey(userId, keyId))) {
      throw new NotFoundError(`key ${keyId} of user ${userId} not found`);
    }
  }
}
