import { BadRequestException, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { LIMITS } from '@chronicle/adventure';

// Every path and named query parameter is checked before a handler sees it, with a message
// naming it: ids the server minted are UUIDs, the rest are bounded printable text. A value
// Postgres would choke on (not a uuid, a NUL, a megabyte) is a 400 here, never a 500 there.

/** Path parameters that name something the server minted, always a UUID. */
const UUID_PARAMS: ReadonlySet<string> = new Set(['id', 'turnId', 'userId', 'keyId', 'webhookId']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export class PathParamsPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'param' && metadata.data) return checkParam(metadata.data, value);
    if (metadata.type === 'query' && metadata.data) return checkQuery(metadata.data, value);
    return value;
  }
}

function checkParam(name: string, value: unknown): string {
  const text = String(value);
  if (UUID_PARAMS.has(name)) {
    if (!isUuid(text)) {
      throw new BadRequestException(`path parameter ${name} must be a UUID; got "${shown(text)}"`);
    }
    return text;
  }
  if (text === '' || text.length > LIMITS.idChars || CONTROL.test(text)) {
    throw new BadRequestException(
      `path parameter ${name} must be an id of 1 to ${LIMITS.idChars} printable characters`,
    );
  }
  return text;
}

function checkQuery(name: string, value: unknown): unknown {
  if (value === undefined) return value;
  if (typeof value !== 'string') {
    throw new BadRequestException(`query parameter ${name} must be given once, as text`);
  }
  if (value.length > LIMITS.idChars || CONTROL.test(value)) {
    throw new BadRequestException(
      `query parameter ${name} must be at most ${LIMITS.idChars} printable characters`,
    );
  }
  return value;
}

/** A client's value, cut short and stripped of control characters, to quote in a message. */
function shown(text: string): string {
  const clean = text.replace(new RegExp(CONTROL, 'g'), '?');
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}

/** The largest stream version (Postgres `integer`). */
export const MAX_STREAM_VERSION = 2_147_483_647;

/** `:version`: a whole number from 0 to MAX_STREAM_VERSION; anything else is a 400 naming it. */
export class StreamVersionPipe implements PipeTransform<unknown, number> {
  transform(value: unknown): number {
    const text = String(value);
    const version = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
    if (!(version >= 0 && version <= MAX_STREAM_VERSION)) {
      throw new BadRequestException(
        `path parameter version must be a stream version (a whole number from 0 to ${MAX_STREAM_VERSION})`,
      );
    }
    return version;
  }
}
