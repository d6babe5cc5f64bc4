import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, type RequestUser } from '../auth/request-user';
import {
  CreatedWebhookView,
  CreateWebhookDto,
  DeliveryAttemptListView,
  WebhookListView,
  WebhookView,
} from './webhook.dto';
import { WebhooksUseCase } from './webhooks.use-case';

const OFF = {
  status: 503,
  description: 'Webhooks are off on this server (no WEBHOOKS_SECRET_KEY)',
};

@ApiTags('webhooks')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksUseCase) {}

  @Post()
  @ApiOperation({
    summary:
      'Register a URL to be told of your adventures (all, or one) by signed POSTs; the secret is shown once',
  })
  @ApiCreatedResponse({ type: CreatedWebhookView })
  @ApiResponse({
    status: 400,
    description: 'A bad URL (a private or loopback address included) or event list',
  })
  @ApiResponse({ status: 404, description: 'adventureId is not one of your adventures' })
  @ApiResponse({ status: 422, description: 'You have the most webhooks a user may' })
  @ApiResponse(OFF)
  create(@CurrentUser() user: RequestUser, @Body() body: CreateWebhookDto) {
    return this.webhooks.create(user.id, body);
  }

  @Get()
  @ApiOperation({ summary: 'Your webhooks (without their secrets)' })
  @ApiOkResponse({ type: WebhookListView })
  @ApiResponse(OFF)
  list(@CurrentUser() user: RequestUser) {
    return this.webhooks.list(user.id);
  }

  @Get(':webhookId')
  @ApiOperation({ summary: 'One of your webhooks (without its secret)' })
  @ApiOkResponse({ type: WebhookView })
  @ApiResponse({ status: 404, description: 'No such webhook of yours' })
  get(@CurrentUser() user: RequestUser, @Param('webhookId') webhookId: string) {
    return this.webhooks.get(user.id, webhookId);
  }

  @Delete(':webhookId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete a webhook: nothing more is sent or retried to it' })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiResponse({ status: 404, description: 'No such webhook of yours' })
  async delete(@CurrentUser() user: RequestUser, @Param('webhookId') webhookId: string) {
    await this.webhooks.delete(user.id, webhookId);
  }

  @Get(':webhookId/deliveries')
  @ApiOperation({
    summary:
      "A webhook's delivery attempts, newest first: status, the receiver's answer, duration, next attempt",
  })
  @ApiOkResponse({ type: DeliveryAttemptListView })
  @ApiResponse({ status: 404, description: 'No such webhook of yours' })
  deliveries(@CurrentUser() user: RequestUser, @Param('webhookId') webhookId: string) {
    return this.webhooks.deliveries(user.id, webhookId);
  }
}
