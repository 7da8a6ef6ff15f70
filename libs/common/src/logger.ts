import { type LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.js';

/** Structured JSON logs on stdout. */
export function createLogger(level: LogLevel, name = 'quartermaster'): Logger {
  return pino({ level, name, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** Routes Nest's own log lines into pino. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
