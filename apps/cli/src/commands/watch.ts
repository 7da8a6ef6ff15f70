import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { ApiError } from '../client/api-client.js';
import type { CommandContext } from '../context.js';
import { CliFailure, UsageError } from '../errors.js';
import { durationWords, localTime } from '../output/time.js';

/** `-w, --watch` and `--interval` as a command's options give them. */
export interface WatchFlags {
  watch?: boolean;
  interval?: string;
}

export const DEFAULT_INTERVAL_MS = 2000;
export const MIN_INTERVAL_MS = 1000;

/** Adds `-w, --watch` and `--interval <seconds>` to a command that shows something that changes. */
export function watchOptions(cmd: Command, what: string): Command {
  return cmd
    .option('-w, --watch', `keep watching: ask the API again every --interval and print ${what} again when it changed; Ctrl-C (or SIGTERM) stops with exit 0`)
    .option('--interval <seconds>', 'with --watch: seconds between two polls (default 2, at least 1; 2s, 1m also work)');
}

/** The poll interval in ms when --watch is given, else undefined; --interval alone, or below 1 s, is a usage error. */
export function watchInterval(opts: WatchFlags): number | undefined {
  if (opts.watch !== true) {
    if (opts.interval !== undefined) throw new UsageError('--interval only applies with --watch (-w)');
    return undefined;
  }
  if (opts.interval === undefined) return DEFAULT_INTERVAL_MS;
  const m = /^(\d+(?:\.\d+)?)(s|m|min)?$/.exec(opts.interval.trim());
  if (m === null) throw new UsageError(`--interval '${opts.interval}': expected seconds, e.g. 2 (or 2s, 1m)`);
  const ms = Number(m[1]) * (m[2] === undefined || m[2] === 's' ? 1000 : 60_000);
  if (ms < MIN_INTERVAL_MS) throw new UsageError(`--interval '${opts.interval}': must be at least 1 second`);
  return ms;
}

/** One look at what is watched: `key` decides whether it changed (the API's data, not the clock-dependent text). */
export interface Frame {
  key: string;
  /** What goes to stdout. */
  text: string;
  /** A note for stderr instead (e.g. "no jobs"), when there is nothing to print. */
  note?: string;
  /** A line for stderr after the text (e.g. "showing 100 of 212"). */
  hint?: string;
}

export interface WatchStyle {
  /** Human formats: every print starts with a `# 14:32:05 UTC` line, and prints are a blank line apart. */
  stamp: boolean;
  /** YAML: documents are `---` apart. */
  yaml?: boolean;
}

/** Whether a failed poll is worth repeating: the server failed, or could not be reached. Bad requests, 401/403/404 end the watch. */
function transient(error: unknown): boolean {
  if (error instanceof ApiError) return error.transient;
  return error instanceof CliFailure;
}

/**
 * `--watch`: polls every `intervalMs` and prints a frame whenever its key changed (the first one always).
 * A server error or an unreachable server is reported on stderr (once per distinct message) and retried;
 * Ctrl-C or SIGTERM ends the watch normally (the action returns; exit 0).
 */
export async function watch(ctx: CommandContext, intervalMs: number, poll: (signal: AbortSignal) => Promise<Frame>, style: WatchStyle): Promise<void> {
  const stop = ctx.interrupted();
  let last: string | undefined;
  let printed = 0;
  let failing: string | undefined;
  while (!stop.aborted) {
    try {
      const frame = await poll(stop);
      if (stop.aborted) break;
      if (failing !== undefined) {
        ctx.warn('qm: the API answers again');
        failing = undefined;
      }
      if (frame.key !== last) {
        last = frame.key;
        if (frame.text === '') {
          if (frame.note !== undefined) ctx.warn(frame.note);
        } else {
          const now = ctx.now();
          let head = '';
          if (style.stamp) head = `${printed > 0 ? '\n' : ''}# ${localTime(now, now, { timeZone: ctx.timeZone, seconds: true })}\n`;
          else if (style.yaml === true && printed > 0) head = '---\n';
          ctx.out(head + frame.text);
          printed++;
        }
        if (frame.hint !== undefined) ctx.warn(frame.hint);
      }
    } catch (error) {
      if (stop.aborted) break;
      if (!transient(error)) throw error;
      const message = `qm: ${(error as Error).message} (retrying every ${durationWords(intervalMs)}; Ctrl-C stops)`;
      if (message !== failing) ctx.warn(message);
      failing = message;
    }
    try {
      await sleep(intervalMs, undefined, { signal: stop });
    } catch {
      break; // stopped while waiting
    }
  }
}
