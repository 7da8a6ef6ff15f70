import type { Trace } from './types.js';

/**
 * The jobs of a trace submitted in [fromMs, toMs) (wall-clock epoch milliseconds), as a trace of their
 * own: virtual time 0 moves to the window's first submission (returned as `epochMs`), so the replay
 * starts with an empty cluster then. Rejected rows are kept (they are the file's, not the window's).
 */
export function traceWindow(trace: Trace & { epochMs: number }, fromMs: number, toMs: number): Trace & { epochMs: number } {
  const inside = trace.jobs.filter((j) => {
    const at = trace.epochMs + j.submitSeconds * 1000;
    return at >= fromMs && at < toMs;
  });
  const first = inside.reduce((m, j) => Math.min(m, j.submitSeconds), Infinity);
  const shift = first === Infinity ? 0 : first;
  return { jobs: inside.map((j) => ({ ...j, submitSeconds: j.submitSeconds - shift })), rejected: trace.rejected, epochMs: trace.epochMs + shift * 1000 };
}
