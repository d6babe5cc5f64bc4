// The room settings (spec/multiplayer.md §3.3, §3.5), checked as every setting is: a bad value is
// a 400 naming the setting and what it may be. Their defaults are DEFAULT_SETTINGS'; what they do
// is the turn policies' and the budget's.

import type { AdventureSettings } from './adventure.events';
import { InvalidCommandError } from './adventure.errors';

export const ROOM_SETTING_KEYS = [
  'turnPolicy',
  'idleTimeoutSeconds',
  'roundTimeoutSeconds',
  'perPlayerDailyTokens',
] as const;
export type RoomSettingKey = (typeof ROOM_SETTING_KEYS)[number];

export function isRoomSetting(key: string): key is RoomSettingKey {
  return (ROOM_SETTING_KEYS as readonly string[]).includes(key);
}

const WHOLE_RANGES: Record<Exclude<RoomSettingKey, 'turnPolicy'>, [number, number]> = {
  idleTimeoutSeconds: [10, 86_400],
  roundTimeoutSeconds: [0, 86_400],
  perPlayerDailyTokens: [0, 1_000_000_000],
};

export function checkRoomSetting(key: RoomSettingKey, value: unknown): Partial<AdventureSettings> {
  if (key === 'turnPolicy') {
    if (value !== 'free' && value !== 'round' && value !== 'hot-seat') {
      throw new InvalidCommandError('settings.turnPolicy must be "free", "round" or "hot-seat"');
    }
    return { turnPolicy: value };
  }
  const [min, max] = WHOLE_RANGES[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidCommandError(`settings.${key} must be a whole number from ${min} to ${max}`);
  }
  return { [key]: value };
}
