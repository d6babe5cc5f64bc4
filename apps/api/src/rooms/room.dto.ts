import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsObject, IsOptional } from 'class-validator';
import { LIMITS } from '@chronicle/adventure';

// The bodies of the room routes (spec/multiplayer.md §3.8). A character's fields are checked by
// the room decider (checkCharacter), which names the field to fix.

export class CharacterDto {
  @ApiProperty({ maxLength: LIMITS.personaNameChars, example: 'Mira' })
  name!: string;

  @ApiPropertyOptional({
    maxLength: LIMITS.personaPronounsChars,
    example: 'she/her',
    description: '"she/her", "he/him", "they/them" or your own; empty reads as they.',
  })
  pronouns?: string;

  @ApiPropertyOptional({ maxLength: LIMITS.textChars })
  description?: string;
}

export class CreateInviteDto {
  @ApiProperty({ enum: ['player', 'spectator'] })
  @IsIn(['player', 'spectator'], { message: 'role must be "player" or "spectator"' })
  role!: 'player' | 'spectator';

  @ApiPropertyOptional({
    minimum: 1,
    maximum: LIMITS.inviteMaxUses,
    description: 'How many people may join with it; left out: no limit.',
  })
  @IsOptional()
  @IsInt({ message: 'maxUses must be a whole number' })
  maxUses?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: LIMITS.inviteLifetimeSeconds,
    description: 'Seconds until it expires; left out: never.',
  })
  @IsOptional()
  @IsInt({ message: 'expiresInSeconds must be a whole number of seconds' })
  expiresInSeconds?: number;
}

export class JoinRoomDto {
  @ApiProperty({ type: CharacterDto, description: 'Who you play in the story.' })
  @IsObject({ message: 'character must be an object: {name, pronouns?, description?}' })
  character!: CharacterDto;
}

export class ChangeMemberDto {
  @ApiPropertyOptional({
    enum: ['host', 'player', 'spectator'],
    description:
      'The host only: the member\'s role. "host" hands the room over: that member becomes the owner (who pays, who may retry) and the host until then stays, as a player.',
  })
  @IsOptional()
  @IsIn(['host', 'player', 'spectator'], {
    message: 'role must be "host" (a hand-over), "player" or "spectator"',
  })
  role?: 'host' | 'player' | 'spectator';

  @ApiPropertyOptional({ type: CharacterDto, description: 'A member for themselves.' })
  @IsOptional()
  @IsObject({ message: 'character must be an object: {name, pronouns?, description?}' })
  character?: CharacterDto;
}

export class CharacterView {
  @ApiProperty() name!: string;
  @ApiProperty() pronouns!: string;
  @ApiProperty() description!: string;
}

export class MemberView {
  @ApiProperty() userId!: string;
  @ApiProperty({ enum: ['host', 'player', 'spectator'] }) role!: string;
  @ApiProperty({ type: CharacterView, nullable: true }) character!: CharacterView | null;
  @ApiProperty({ enum: ['active', 'away', 'left'] }) status!: string;
}

export class MembersView {
  @ApiProperty({ type: [MemberView] }) members!: MemberView[];
  @ApiProperty() version!: number;
}

export class InviteView {
  @ApiProperty({ description: 'The secret: whoever holds it may join.' }) code!: string;
  @ApiProperty({ description: 'The route that joins with it (POST, with your own key).' })
  url!: string;
  @ApiProperty({ enum: ['player', 'spectator'] }) role!: string;
  @ApiProperty({ type: Number, nullable: true }) maxUses!: number | null;
  @ApiProperty() uses!: number;
  @ApiProperty({ type: String, nullable: true }) expiresAt!: string | null;
}

export class InvitesView {
  @ApiProperty({ type: [InviteView] }) invites!: InviteView[];
}

export class MembershipView {
  @ApiProperty() adventureId!: string;
  @ApiProperty() userId!: string;
  @ApiProperty({ enum: ['host', 'player', 'spectator'] }) role!: string;
}
