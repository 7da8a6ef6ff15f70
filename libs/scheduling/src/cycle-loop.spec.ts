import { describe, expect, it } from '@jest/globals';
import { CycleLoop, type Timers } from './cycle-loop.js';

/** Timers the test fires by hand: deterministic, no waiting. */
class ManualTimers implements Timers {
  private next = 1;
  readonly pending = new Map<number, { fn: () => void; ms: number }>();
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { fn, ms });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  /** Fires every timer of the given delay that is pending now. */
  fire(ms: number): void {
    for (const [id, timer] of [...this.pending]) {
      if (timer.ms !== ms) continue;
      this.pending.delete(id);
      timer.fn();
    }
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('CycleLoop', () => {
  it('joins triggers inside the debounce window into one cycle', async () => {
    const timers = new ManualTimers();
    const runs: string[][] = [];
    const loop = new CycleLoop((reasons) => (runs.push(reasons), Promise.resolve()), { debounceMs: 20, tickMs: 1000 }, () => {}, timers);
    loop.start();
    loop.trigger('job.submitted');
    loop.trigger('job.submitted');
    loop.trigger('quota.changed');
    timers.fire(20);
    await settle();
    expect(runs).toEqual([['start', 'job.submitted', 'quota.changed']]);
    await loop.stop();
  });

  it('runs exactly one more cycle for triggers that arrive while a cycle runs', async () => {
    const timers = new ManualTimers();
    const runs: string[][] = [];
    let release: () => void = () => {};
    const loop = new CycleLoop(
      (reasons) => {
        runs.push(reasons);
        return runs.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
      },
      { debounceMs: 5, tickMs: 1000 },
      () => {},
      timers,
    );
    loop.start();
    timers.fire(5);
    loop.trigger('job.submitted');
    loop.trigger('job.cancelled');
    expect(runs).toHaveLength(1);
    release();
    await settle();
    timers.fire(5);
    await settle();
    expect(runs).toEqual([['start'], ['job.submitted', 'job.cancelled', 'rerun']]);
    await loop.stop();
  });

  it('keeps running after a failed cycle and reports the error', async () => {
    const timers = new ManualTimers();
    const errors: unknown[] = [];
    let calls = 0;
    const loop = new CycleLoop(
      () => (++calls === 1 ? Promise.reject(new Error('db down')) : Promise.resolve()),
      { debounceMs: 0, tickMs: 1000 },
      (error) => errors.push(error),
      timers,
    );
    loop.start();
    timers.fire(0);
    await settle();
    timers.fire(1000);
    timers.fire(0);
    await settle();
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
    await loop.stop();
  });

  it('ignores triggers once stopped', async () => {
    const timers = new ManualTimers();
    let calls = 0;
    const loop = new CycleLoop(() => (calls++, Promise.resolve()), { debounceMs: 0, tickMs: 1000 }, () => {}, timers);
    loop.start();
    await loop.stop();
    loop.trigger('job.submitted');
    timers.fire(0);
    timers.fire(1000);
    await settle();
    expect(calls).toBe(0);
  });
});
