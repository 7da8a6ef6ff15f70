import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/** Structured JSON logs (pino) on stdout. `component` names the part of the service on every line. */
export function createLogger(options: { level?: string; component: string; base?: Record<string, unknown> }): Logger {
  const level = (options.level ?? 'info') as LevelWithSilent;
  return pino({ level, base: { component: options.component, pid: process.pid, ...options.base }, timestamp: pino.stdTimeFunctions.isoTime });
}
