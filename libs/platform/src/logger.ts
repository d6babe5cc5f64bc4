import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggerService } from '@nestjs/common';
import { currentTraceIds } from '@chronicle/telemetry';
import type { LogLevel } from './config';

// Structured JSON logs, one object a line. The correlation fields of the
// request or job being served (requestId, adventureId, turnId, jobId, attempt)
// travel in AsyncLocalStorage, so code deep inside a use case logs with them
// without threading them through every call. With tracing on, a line written inside a span
// carries its trace_id and span_id too, so the log and the trace of a turn find each other.

export interface LogFields {
  requestId?: string;
  adventureId?: string;
  turnId?: string;
  jobId?: string;
  attempt?: number;
  [key: string]: unknown;
}

const logContext = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` added to every log line written inside it. */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
  const parent = logContext.getStore();
  return logContext.run({ ...parent, ...fields }, fn);
}

export function currentLogContext(): LogFields {
  return logContext.getStore() ?? {};
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export class JsonLogger implements LoggerService {
  constructor(
    private readonly app: string,
    private readonly level: LogLevel = 'info',
    private readonly write: (line: string) => void = (line) => process.stdout.write(line),
  ) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.emit('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.emit('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.emit('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', message, rest);
  }

  /** A log line with structured fields, for our own code (Nest's calls use log/warn/…). */
  event(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
    if (RANK[level] < RANK[this.level]) return;
    this.print(level, msg, fields);
  }

  private emit(level: LogLevel, message: unknown, rest: unknown[]): void {
    if (RANK[level] < RANK[this.level]) return;
    // Nest passes the context name last, and for errors the stack before it.
    const args = [...rest];
    const context = typeof args[args.length - 1] === 'string' ? (args.pop() as string) : undefined;
    const fields: Record<string, unknown> = {};
    if (context) fields.context = context;
    if (level === 'error' && typeof args[0] === 'string' && args[0].includes('\n')) {
      fields.stack = args.shift();
    }
    if (message instanceof Error) {
      fields.error = message.name;
      fields.stack = message.stack;
      this.print(level, message.message, fields);
      return;
    }
    if (message !== null && typeof message === 'object') {
      const { msg, message: m, ...others } = message as Record<string, unknown>;
      this.print(level, String(msg ?? m ?? ''), { ...fields, ...others });
      return;
    }
    this.print(level, String(message), fields);
  }

  private print(level: LogLevel, msg: string, fields: Record<string, unknown>): void {
    const line = {
      time: new Date().toISOString(),
      level,
      app: this.app,
      msg,
      ...currentLogContext(),
      ...currentTraceIds(),
      ...fields,
    };
    this.write(`${JSON.stringify(line)}\n`);
  }
}
