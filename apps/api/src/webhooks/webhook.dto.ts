import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
} from 'class-validator';
import { WEBHOOK_EVENT_TYPES } from '@chronicle/webhooks';

/** The longest webhook URL accepted. */
export const WEBHOOK_URL_CHARS = 2_048;
const DESCRIPTION_CHARS = 200;
const EVENTS = `one or more of ${WEBHOOK_EVENT_TYPES.join(', ')}`;

export class CreateWebhookDto {
  @ApiProperty({
    maxLength: WEBHOOK_URL_CHARS,
    example: 'https://bot.example/chronicle',
    description:
      'Where deliveries are POSTed: http(s), no credentials, a public address unless the operator allows private ones.',
  })
  @IsString({
    message: 'url is required: where deliveries are sent, such as https://bot.example/hooks',
  })
  @MinLength(1, {
    message: 'url is required: where deliveries are sent, such as https://bot.example/hooks',
  })
  @MaxLength(WEBHOOK_URL_CHARS, {
    message: `url is too long; keep it to ${WEBHOOK_URL_CHARS} characters`,
  })
  url!: string;

  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, isArray: true, example: ['turn.narrated'] })
  @IsArray({ message: `events must be a list: ${EVENTS}` })
  @ArrayMinSize(1, { message: `events must name ${EVENTS}` })
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length, { message: `events must name ${EVENTS}` })
  @ArrayUnique({ message: 'events names an event twice' })
  @IsIn(WEBHOOK_EVENT_TYPES as unknown as string[], {
    each: true,
    message: `events may hold only ${WEBHOOK_EVENT_TYPES.join(', ')}`,
  })
  events!: string[];

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Only this adventure (yours); absent: every adventure you own, now and later.',
  })
  @IsOptional()
  @IsUUID('all', { message: 'adventureId must be the uuid of one of your adventures' })
  adventureId?: string;

  @ApiPropertyOptional({ maxLength: DESCRIPTION_CHARS, example: 'Discord bot' })
  @IsOptional()
  @IsString()
  @MaxLength(DESCRIPTION_CHARS, {
    message: `description is too long; keep it to ${DESCRIPTION_CHARS} characters`,
  })
  description?: string;
}

export class WebhookView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  url!: string;

  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, isArray: true })
  events!: string[];

  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'null: every adventure you own.',
  })
  adventureId!: string | null;

  @ApiProperty()
  description!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class CreatedWebhookView extends WebhookView {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description:
      'The signing secret (Standard Webhooks, `whsec_…`): shown here once and never again. Verify each delivery with it.',
  })
  secret!: string;
}

export class WebhookListView {
  @ApiProperty({ type: [WebhookView] })
  webhooks!: WebhookView[];
}

export class DeliveryAttemptView {
  @ApiProperty({ description: 'The same on every attempt of one delivery.' })
  deliveryId!: string;

  @ApiProperty({ description: 'The `webhook-id` header the receiver saw: its idempotency key.' })
  messageId!: string;

  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES })
  event!: string;

  @ApiProperty({ description: '1 for the first attempt.' })
  attempt!: number;

  @ApiProperty({
    enum: ['delivered', 'retrying', 'failed', 'refused'],
    description:
      'delivered: a 2xx answer; retrying: another attempt follows at nextAttemptAt; failed: the last attempt failed; refused: the address may not be reached (never sent).',
  })
  status!: string;

  @ApiProperty({
    nullable: true,
    type: Number,
    description: "The receiver's HTTP status; null: no answer.",
  })
  responseStatus!: number | null;

  @ApiProperty()
  durationMs!: number;

  @ApiProperty({ nullable: true, type: String })
  error!: string | null;

  @ApiProperty({ nullable: true, type: String, format: 'date-time' })
  nextAttemptAt!: string | null;

  @ApiProperty({ format: 'date-time' })
  attemptedAt!: string;
}

export class DeliveryAttemptListView {
  @ApiProperty({ type: [DeliveryAttemptView], description: 'Newest first, at most 100.' })
  deliveries!: DeliveryAttemptView[];
}
